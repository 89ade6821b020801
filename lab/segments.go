package lab

import (
	"fmt"
	"strings"

	"github.com/latscope/latscope/internal/report/markdown"
)

// SegmentShare is one segment of the seed experiment's handler (cpu,
// upstream, db, shared) in its two profiles: its share of the wall clock
// and of the CPU profile's samples, in per cent of the segments' total.
type SegmentShare struct {
	Segment string  `json:"segment"`
	WallPct float64 `json:"wall_pct"`
	CPUPct  float64 `json:"cpu_pct"`
}

// Shares turns each segment's wall time and CPU samples (in WallPct and
// CPUPct, any unit) into per cents of their totals.
func Shares(raw []SegmentShare) []SegmentShare {
	var wall, cpu float64
	for _, r := range raw {
		wall += r.WallPct
		cpu += r.CPUPct
	}
	out := make([]SegmentShare, len(raw))
	for i, r := range raw {
		out[i] = SegmentShare{Segment: r.Segment, WallPct: Pct(r.WallPct, wall), CPUPct: Pct(r.CPUPct, cpu)}
	}
	return out
}

// WriteDisagreement writes the seed experiment's first section, the same
// for the Go and the JVM lab: intro (what the two profiles were made of),
// the segments' shares of each, and which segment each ranks first.
func WriteDisagreement(b *strings.Builder, intro string, shares []SegmentShare) {
	fmt.Fprintf(b, "## 1. Two profiles, two different answers (serial mode)\n\n")
	fmt.Fprintf(b, "%s\n\n", intro)
	t := markdown.NewTable("segment", "wall clock", "CPU profile").RightFrom(1)
	for _, r := range shares {
		t.Row(r.Segment, fmt.Sprintf("%.1f %%", r.WallPct), fmt.Sprintf("%.1f %%", r.CPUPct))
	}
	b.WriteString(t.String())
	if len(shares) > 0 {
		fmt.Fprintf(b, "\nThe CPU profile ranks %s first; the wall clock ranks %s first.\n\n", markdown.Bold(TopSegment(shares, true)), markdown.Bold(TopSegment(shares, false)))
	}
}

// TopSegment is the segment with the largest CPU share (cpu) or wall
// share; the first of equals.
func TopSegment(rs []SegmentShare, cpu bool) string {
	best, name := -1.0, ""
	for _, r := range rs {
		v := r.WallPct
		if cpu {
			v = r.CPUPct
		}
		if v > best {
			best, name = v, r.Segment
		}
	}
	return name
}

// Bracket is " (lo–hi)" for an interval, "" without one.
func Bracket(r *Range) string {
	if r == nil {
		return ""
	}
	return " (" + RangeWords(r.Low, r.High) + ")"
}
