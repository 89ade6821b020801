package htmlreport

import (
	"fmt"
	"math"
	"strings"

	"github.com/latscope/latscope/internal/render"
)

// predictionSection tabulates the what-ifs against the measured baseline:
// each prediction's mean with its 95 % interval, and the method the one
// engine chose (whatif.Evaluate), with its reason beneath the table.
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
	t := Table{Columns: []Column{{Name: "what if"}, {Name: "mean", Num: true},
		{Name: "95 %", Num: true, Tip: "the predicted mean's 95 % interval: batch means over each request's predicted latency (docs/method.md §13)"},
		{Name: "Δ mean", Num: true}, {Name: "p99", Num: true},
		{Name: "throughput", Num: true, Tip: "closed model: clients ÷ mean latency, capped by CPU and pool"}, {Name: "limited by"},
		{Name: "method", Tip: "the queueing model where a queue (a pool, a lock, the CPUs) is in play, the timeline simulation where none is"}}}
	t.Rows = append(t.Rows, []Cell{{Text: "as measured", Class: "strong"}, {Text: fmtMs(q.Mean.Ms()), Bar: q.Mean.Ms() / hi, Color: "#7d8a96"},
		{Text: "", Class: "muted"}, {Text: "—", Class: "muted"}, {Text: fmtMs(q.P99.Ms())}, {Text: fmt.Sprintf("%.1f/s", tp.MeasuredRPS)}, {Text: "", Class: "muted"}, {Text: "", Class: "muted"}})
	for _, p := range g.Predictions {
		cls := "good"
		switch {
		case math.Abs(p.DeltaPct) < 0.05:
			cls = "muted"
		case p.DeltaPct > 0:
			cls = "bad"
		}
		t.Rows = append(t.Rows, []Cell{{Text: p.Spec}, {Text: fmtMs(p.Mean.Ms()), Bar: p.Mean.Ms() / hi}, intervalCell(p),
			{Text: fmt.Sprintf("%+.1f%%", p.DeltaPct), Class: cls}, p99Cell(p.P99), {Text: fmt.Sprintf("%.1f/s", p.RPS)}, {Text: p.Limit, Class: "muted"},
			{Text: p.Method, Tip: p.Why}})
	}
	if h, err := t.HTML(); err == nil {
		b.raw(h)
	}
	for _, p := range g.Predictions {
		if p.Why != "" {
			b.p("note", fmt.Sprintf("%s, by the %s: %s.", p.Spec, p.Method, p.Why))
		}
	}
	b.p("note", throughputText(tp))
	return Section{Title: "Predictions", Body: b.html(),
		Intro: "Each what-if is predicted by the queueing model where a queue (a pool, a lock, the CPUs) is in play, and otherwise simulated on every request's critical path: a removed term costs nothing, a scaled one takes FACTOR times as long, overlapped ones run side by side."}
}

// intervalCell is a prediction's 95 % interval, "low–high", or "n/a" when
// the engine gave none (too few requests, a model that saturates).
func intervalCell(p render.Prediction) Cell {
	if p.MeanLow == nil || p.MeanHigh == nil {
		return Cell{Text: "n/a", Class: "muted", Tip: "no interval"}
	}
	return Cell{Text: strings.TrimSuffix(fmtMs(p.MeanLow.Ms()), " ms") + "–" + fmtMs(p.MeanHigh.Ms())}
}

// p99Cell is a predicted p99, "n/a" when not predicted (the queueing
// model gives means only; a timeline prediction queueing at a cap).
func p99Cell(d render.Duration) Cell {
	if d == 0 {
		return Cell{Text: "n/a", Class: "muted", Tip: "not predicted"}
	}
	return Cell{Text: fmtMs(d.Ms())}
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
