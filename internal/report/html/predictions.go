package htmlreport

import (
	"fmt"
	"math"

	"github.com/latscope/latscope/internal/render"
)

// predictionSection tabulates the what-ifs against the measured baseline.
func predictionSection(g *render.Group) Section {
	var b body
	q, tp := g.Requests, g.Throughput
	if len(g.Predictions) == 0 {
		b.p("note", throughputText(tp))
		return Section{Title: "Predictions", Body: b.html(),
			Intro: "No what-if was asked. Add --what-if remove=TERM, scale=TERM:FACTOR or overlap=TERM,TERM; each is simulated on every request's critical path."}
	}
	hi := q.Mean.Ms()
	for _, p := range g.Predictions {
		hi = math.Max(hi, p.Mean.Ms())
	}
	t := Table{Columns: []Column{{Name: "what if"}, {Name: "mean", Num: true}, {Name: "Δ mean", Num: true}, {Name: "p99", Num: true},
		{Name: "throughput", Num: true, Tip: "closed model: clients ÷ mean latency, capped by CPU and pool"}, {Name: "limited by"}}}
	t.Rows = append(t.Rows, []Cell{{Text: "as measured", Class: "strong"}, {Text: fmtMs(q.Mean.Ms()), Bar: q.Mean.Ms() / hi, Color: "#7d8a96"},
		{Text: "—", Class: "muted"}, {Text: fmtMs(q.P99.Ms())}, {Text: fmt.Sprintf("%.1f/s", tp.MeasuredRPS)}, {Text: "", Class: "muted"}})
	for _, p := range g.Predictions {
		cls := "good"
		switch {
		case math.Abs(p.DeltaPct) < 0.05:
			cls = "muted"
		case p.DeltaPct > 0:
			cls = "bad"
		}
		t.Rows = append(t.Rows, []Cell{{Text: p.Spec}, {Text: fmtMs(p.Mean.Ms()), Bar: p.Mean.Ms() / hi},
			{Text: fmt.Sprintf("%+.1f%%", p.DeltaPct), Class: cls}, {Text: fmtMs(p.P99.Ms())}, {Text: fmt.Sprintf("%.1f/s", p.RPS)}, {Text: p.Limit, Class: "muted"}})
	}
	if h, err := t.HTML(); err == nil {
		b.raw(h)
	}
	b.p("note", throughputText(tp))
	return Section{Title: "Predictions", Body: b.html(),
		Intro: "Each what-if is simulated on every request's critical path: a removed term costs nothing, a scaled one takes FACTOR times as long, overlapped ones run side by side."}
}

func throughputText(tp render.Throughput) string {
	est := ""
	if tp.ClientsEstimated {
		est = " (estimated: Σ latency ÷ window, Little's law)"
	}
	s := fmt.Sprintf("Closed model: %.1f clients%s, %.0f cores, %s CPU per request → CPU cap %.0f/s; measured %.1f/s, predicted %.1f/s.",
		tp.Clients, est, tp.Cores, fmtMs(tp.CPUPerRequest.Ms()), tp.CPUCapRPS, tp.MeasuredRPS, tp.PredictedRPS)
	if tp.Pool > 0 {
		s += fmt.Sprintf(" Pool of %d held %s per request → pool cap %.0f/s.", tp.Pool, fmtMs(tp.PoolHold.Ms()), tp.PoolCapRPS)
	}
	return s
}
