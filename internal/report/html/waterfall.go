package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/latscope/latscope/internal/render"
)

// Waterfall draws one request's critical path across goroutines: a row per
// goroutine in order of first appearance, each piece coloured by kind, time
// on goroutines outside the request (borrowed) hatched, hand-offs between
// goroutines as thin vertical lines.
type Waterfall struct {
	Label string
	Path  *render.Path
	Unit  string // what the rows are: "goroutine" ("" too) or "thread"
}

// SVG draws the waterfall.
func (wf Waterfall) SVG() template.HTML {
	const rowH, segH, top, left, right, bottom = 30.0, 18.0, 30.0, 170.0, 24.0, 40.0
	p := wf.Path
	if p == nil || len(p.Segments) == 0 {
		s := newSVG(chartW, 60, "waterfall", wf.Label)
		s.text(chartW/2, 34, "middle", "empty", "no critical path recorded")
		return s.html()
	}
	rows, order := waterfallRows(p.Segments)
	h := top + float64(len(order))*rowH + bottom
	s := newSVG(chartW, h, "waterfall", wf.Label)
	span := math.Max(finite(p.Latency.Ms()), 1e-6)
	for _, sg := range p.Segments {
		span = math.Max(span, finite(sg.Start.Ms()+sg.Dur.Ms()))
	}
	pw := chartW - left - right
	xs := func(ms float64) float64 { return left + pw*finite(ms)/span }
	bottomY := top + float64(len(order))*rowH
	for _, t := range ticks(0, span, 10) {
		s.line(xs(t), top-4, xs(t), bottomY, "grid")
		s.text(xs(t), bottomY+16, "middle", "tick", fmtNum(t))
	}
	s.text(left+pw/2, h-6, "middle", "axis-title", "ms since the request began")
	for i, g := range order {
		y := top + float64(i)*rowH
		s.rect(0, y+1, chartW, rowH-2, "transparent", "lane", "")
		label, note := fmt.Sprintf("G%d", g.id), "request goroutine"
		if wf.Unit == "thread" {
			label, note = fmt.Sprintf("T%d", g.id), "request thread"
		}
		s.text(left-12, y+rowH/2+1, "end", "label", label)
		if g.borrowedOnly {
			note = "outside the request"
		}
		s.text(left-12, y+rowH/2+13, "end", "note", note)
	}
	wf.hops(s, p.Segments, rows, xs, top, rowH)
	for _, sg := range p.Segments {
		y := top + float64(rows[sg.Goroutine])*rowH + (rowH-segH)/2
		wf.segment(s, sg, xs(sg.Start.Ms()), y, math.Max(xs(sg.Start.Ms()+sg.Dur.Ms())-xs(sg.Start.Ms()), 0.8), segH)
	}
	return s.html()
}

// lane is one goroutine row.
type lane struct {
	id           int64
	borrowedOnly bool
}

func waterfallRows(segs []render.Segment) (map[int64]int, []lane) {
	rows := map[int64]int{}
	var order []lane
	for _, sg := range segs {
		i, ok := rows[sg.Goroutine]
		if !ok {
			i = len(order)
			rows[sg.Goroutine] = i
			order = append(order, lane{id: sg.Goroutine, borrowedOnly: true})
		}
		if !sg.Borrowed {
			order[i].borrowedOnly = false
		}
	}
	return rows, order
}

// hops draws a line where the path moves from one goroutine to another.
func (wf Waterfall) hops(s *svg, segs []render.Segment, rows map[int64]int, xs func(float64) float64, top, rowH float64) {
	for i := 1; i < len(segs); i++ {
		a, b := rows[segs[i-1].Goroutine], rows[segs[i].Goroutine]
		if a == b {
			continue
		}
		x := xs(segs[i].Start.Ms())
		s.line(x, top+float64(min(a, b))*rowH+rowH/2, x, top+float64(max(a, b))*rowH+rowH/2, "hop")
	}
}

func (wf Waterfall) segment(s *svg, sg render.Segment, x, y, w, h float64) {
	kind := sg.Kind
	if sg.Unknown {
		kind = "unknown"
	}
	class := "seg"
	if sg.Contention {
		class += " contention"
	}
	tip := segmentTip(sg)
	s.rect(x, y, w, h, KindColor(kind), class, tip)
	if sg.Borrowed {
		s.rect(x, y, w, h, "url(#ls-hatch)", "hatch", tip)
	}
	label := kind
	if sg.Term != "" {
		label = termFrame(sg.Term)
		if sg.Borrowed {
			label = kind + " ← " + label
		}
	}
	if tw := textWidth(label, 11); tw+8 <= w {
		s.text(x+w/2, y+h/2+4, "middle", "seg-label", label)
	} else if tw := textWidth(kind, 11); tw+8 <= w {
		s.text(x+w/2, y+h/2+4, "middle", "seg-label", kind)
	}
}

func segmentTip(sg render.Segment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "+%.2f ms, %s on G%d: %s", sg.Start.Ms(), fmtMs(sg.Dur.Ms()), sg.Goroutine, sg.Kind)
	if sg.Term != "" {
		if sg.Borrowed {
			b.WriteString(", outside the request, explaining the wait ")
		} else {
			b.WriteString(", waiting in ")
		}
		b.WriteString(sg.Term)
	}
	if sg.Contention {
		b.WriteString(" (held by another request)")
	}
	if sg.Unknown {
		b.WriteString(" (not explained by the timelines)")
	}
	return b.String()
}

// termFrame returns the frame part of a term's display name.
func termFrame(term string) string {
	if i := strings.Index(term, " ["); i > 0 {
		return term[:i]
	}
	return term
}
