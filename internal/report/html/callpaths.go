package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/latscope/latscope/internal/render"
)

// colorFrame fills an icicle's frames; leaves (the waits) take their kind's colour.
const colorFrame = "#c9d3dc"

// Icicle draws a call tree of waits: one row per depth of the call path,
// outermost frame on top, each frame as wide as its time. Two icicles on
// one scale, the critical path's and the goroutines' (which counts parallel
// waits more than once), show where the waits are and which of them the
// latency is made of.
type Icicle struct {
	Label string
	Root  *render.CallNode
	Unit  string // what runs the waits: "goroutine" ("" too) or "thread"
}

// SVG draws the two icicles.
func (ic Icicle) SVG() template.HTML {
	const rowH, gap, left, right, title = 22.0, 2.0, 8.0, 8.0, 22.0
	depth := treeDepth(ic.Root)
	blockH := title + float64(depth)*rowH
	h := 2*blockH + 30
	s := newSVG(chartW, h, "icicle", ic.Label)
	if ic.Root == nil || len(ic.Root.Children) == 0 {
		s.text(chartW/2, 34, "middle", "empty", "no waits")
		return s.html()
	}
	scale := math.Max(ic.Root.Critical, ic.Root.Wait)
	if scale <= 0 {
		scale = 1
	}
	pw := chartW - left - right
	unit := ic.Unit
	if unit == "" {
		unit = "goroutine"
	}
	for i, v := range []struct {
		name  string
		value func(*render.CallNode) float64
	}{
		{"on the critical path", func(n *render.CallNode) float64 { return n.Critical }},
		{unit + " time", func(n *render.CallNode) float64 { return n.Wait }},
	} {
		top := float64(i) * (blockH + 30)
		s.text(left, top+15, "start", "label", fmt.Sprintf("%s: %s per request", v.name, fmtMs(v.value(ic.Root))))
		var draw func(n *render.CallNode, x float64, d int, path []string)
		draw = func(n *render.CallNode, x float64, d int, path []string) {
			for _, c := range n.Children {
				w := pw * finite(v.value(c)) / scale
				p := append(path[:len(path):len(path)], c.Label)
				if w >= 0.5 {
					fill, class := colorFrame, "frame-label"
					if c.Kind != "" {
						fill, class = KindColor(c.Kind), "frame-label leaf"
					}
					y := top + title + float64(d)*rowH
					tip := fmt.Sprintf("%s\ncritical %s · %s time %s per request", strings.Join(p, " › "), fmtMs(c.Critical), unit, fmtMs(c.Wait))
					s.rect(left+x, y, math.Max(w-gap, 0.5), rowH-gap, fill, "frame", tip)
					if w > 60 {
						s.textTip(left+x+4, y+rowH/2+4, "start", class, clip(c.Label, int(w/6.5)), tip)
					}
					draw(c, x, d+1, p)
				}
				x += w
			}
		}
		draw(ic.Root, 0, 0, nil)
	}
	return s.html()
}

// treeDepth is the number of rows an icicle needs.
func treeDepth(n *render.CallNode) int {
	if n == nil {
		return 1
	}
	d := 0
	for _, c := range n.Children {
		d = max(d, 1+treeDepth(c))
	}
	return max(d, 1)
}

// callPathSection shows a request type's waits, and the CPU of its frames,
// rolled up by call path.
func callPathSection(g *render.Group, opts Options) (Section, bool) {
	unit := wordsOf(opts).unit
	root := render.CallTree(g.TreeTerms())
	if len(root.Children) == 0 {
		return Section{}, false
	}
	what := "waits"
	if len(g.CPUTerms) > 0 {
		what = "waits and CPU"
	}
	var b body
	b.lead(fmt.Sprintf("%s of %s per request on the critical path, %s of %s time.", fmtMs(root.Critical), what, fmtMs(root.Wait), unit))
	b.raw(Icicle{Label: what + " by call path", Root: root, Unit: unit}.SVG())
	t := Table{Class: "compact", Columns: []Column{{Name: "call path"}, {Name: "critical ms", Num: true}, {Name: unit + " ms", Num: true}}}
	for _, r := range root.Rows() {
		t.Rows = append(t.Rows, []Cell{{Text: strings.Repeat("\u00a0\u00a0\u00a0", r.Depth) + r.Label, Tip: r.Frame},
			{Text: fmt.Sprintf("%.2f", r.Critical), Bar: r.Critical / math.Max(root.Critical, 1e-9)},
			{Text: fmt.Sprintf("%.2f", r.Wait)}})
	}
	if h, err := t.HTML(); err == nil {
		b.details("the call tree as a table", h)
	}
	title, intro, sums := "Waits by call path", "Each wait sits beneath the chain of application frames that led to it, so one helper called from two places shows twice.", "the waits' share of the latency"
	if len(g.CPUTerms) > 0 {
		title = "Waits and CPU by call path"
		intro = "Each wait, and each frame's CPU (a leaf [running]), sits beneath the chain of application frames that led to it, so one helper called from two places shows twice."
		sums = "the share of the latency that waits and frames' CPU take"
	}
	return Section{Title: title, Body: b.html(),
		Intro: intro + " A frame is as wide as the time of everything beneath it: the upper icicle is time on the critical path (it adds up to " + sums + "), the lower one " + unit + " time. Hover for the whole path."}, true
}
