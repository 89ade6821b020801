package htmlreport

import (
	"fmt"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/render"
)

// latencySection draws the latency histogram and latency by request.
func latencySection(g *render.Group, rg *budget.Group, opts Options) Section {
	q := g.Requests
	if opts.jvm && q.Mean == 0 && (rg == nil || len(rg.Latencies) == 0) {
		return jvmLatencySection()
	}
	marks := []Mark{{Value: q.P50.Ms(), Label: "p50 " + fmtMs(q.P50.Ms()), Color: colorMarkP50},
		{Value: q.Mean.Ms(), Label: "mean " + fmtMs(q.Mean.Ms()), Color: colorMarkMean},
		{Value: q.P90.Ms(), Label: "p90 " + fmtMs(q.P90.Ms()), Color: colorMarkMean},
		{Value: q.P99.Ms(), Label: "p99 " + fmtMs(q.P99.Ms()), Color: colorMarkP99}}
	sortMarks(marks)
	sec := Section{Title: "Latency distribution",
		Intro: fmt.Sprintf("Latency of the %s that began and ended inside the trace; exact percentiles (nearest rank).", plural(q.Count, "request"))}
	if q.Excluded > 0 {
		sec.Note = fmt.Sprintf("%s cut by the trace window are excluded (%d begun before it, %d unfinished at its end).", plural(q.Excluded, "request"), q.ExcludedBefore, q.ExcludedAfter)
	}
	if rg == nil || len(rg.Latencies) == 0 {
		var b body
		b.p("note", fmt.Sprintf("min %s · p50 %s · p90 %s · p99 %s · max %s (per-request latencies not available)", fmtMs(q.Min.Ms()), fmtMs(q.P50.Ms()), fmtMs(q.P90.Ms()), fmtMs(q.P99.Ms()), fmtMs(q.Max.Ms())))
		sec.Body = b.html()
		return sec
	}
	vals := make([]float64, len(rg.Latencies))
	pts := make([]Point, len(rg.Latencies))
	for i, ns := range rg.Latencies {
		vals[i] = float64(ns) / 1e6
		pts[i] = Point{X: float64(i + 1), Y: vals[i]}
	}
	var b body
	b.raw(Histogram{Label: "latency histogram", Unit: "latency, ms", Values: vals, Bins: opts.Bins, Marks: marks}.SVG())
	b.raw(Timeline{Label: "latency by request", XLabel: "request, in the order they ended (a rising start is warm-up inside the window)",
		XMin: 0, XMax: float64(len(pts)) + 1,
		Panels: []Panel{{Title: "latency by request", Unit: "ms", Height: 130, FitY: true,
			Lines: []Line{{Name: "one request", Color: colorLatency, Style: StylePoints, Points: pts}},
			Marks: []Mark{{Value: q.P50.Ms(), Label: "p50", Color: colorMarkP50}, {Value: q.P99.Ms(), Label: "p99", Color: colorMarkP99}}}}}.SVG())
	sec.Body = b.html()
	return sec
}

// sortMarks orders marks by value so staggered labels alternate sensibly.
func sortMarks(m []Mark) {
	for i := 1; i < len(m); i++ {
		for j := i; j > 0 && m[j].Value < m[j-1].Value; j-- {
			m[j], m[j-1] = m[j-1], m[j]
		}
	}
}
