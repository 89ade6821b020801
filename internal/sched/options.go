package sched

import (
	"encoding/json"
	"time"

	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/frame"
)

// Thresholds decide findings and bursts. They come from the method
// (docs/sched.md); a zero field takes DefaultThresholds' value.
type Thresholds struct {
	// SchedShare is the share of CPU in the scheduler above which the
	// overhead is a finding: the rule of thumb "scan over 10–15 % deserves a look"
	// (docs/method.md §9), at its lower end.
	SchedShare float64 `json:"sched_share"`
	// MinSamples is the fewest CPU samples on which a share is judged; with
	// fewer, the 95 % interval of a 10 % share is wider than ±8 points.
	MinSamples int64 `json:"min_samples"`
	// BurstGap ends a burst: wakeups and creations closer than this to the
	// previous one belong to the same burst.
	BurstGap time.Duration `json:"-"` // JSON: burst_gap_ms
	// MinBurst is the size from which a burst is large: more goroutines
	// woken at once than a small pool would ever need.
	MinBurst int `json:"min_burst"`
}

// MarshalJSON writes BurstGap in milliseconds.
func (t Thresholds) MarshalJSON() ([]byte, error) {
	type plain Thresholds
	return json.Marshal(struct {
		plain
		BurstGap float64 `json:"burst_gap_ms"`
	}{plain(t), units.Ms(t.BurstGap)})
}

// DefaultThresholds are the thresholds of `latscope analyze`.
var DefaultThresholds = Thresholds{
	SchedShare: 0.10,
	MinSamples: 50,
	BurstGap:   time.Millisecond,
	MinBurst:   16,
}

// Options configure an analysis. A zero field takes DefaultOptions' value.
type Options struct {
	Frames     *Frames     // the frame table
	Rules      frame.Rules // decide application frames (payers, wakers)
	Thresholds Thresholds
	Host       Host // what the process may use, when known
	Top        int  // rows in top-N lists
}

// DefaultOptions are the options of `latscope analyze` without flags.
var DefaultOptions = Options{
	Frames:     DefaultFrames,
	Rules:      frame.DefaultRules,
	Thresholds: DefaultThresholds,
	Top:        8,
}

func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.Frames == nil {
		o.Frames = d.Frames
	}
	if o.Rules.Infra == nil && o.Rules.Machinery == nil && o.Rules.App == nil {
		o.Rules = d.Rules
	}
	if o.Top <= 0 {
		o.Top = d.Top
	}
	o.Thresholds = o.Thresholds.Or(d.Thresholds)
	return o
}

// Or returns t with each threshold that is not set (zero or less) taken
// from d.
func (t Thresholds) Or(d Thresholds) Thresholds {
	if t.SchedShare <= 0 {
		t.SchedShare = d.SchedShare
	}
	if t.MinSamples <= 0 {
		t.MinSamples = d.MinSamples
	}
	if t.BurstGap <= 0 {
		t.BurstGap = d.BurstGap
	}
	if t.MinBurst <= 0 {
		t.MinBurst = d.MinBurst
	}
	return t
}
