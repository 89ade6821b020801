package htmlreport

import (
	"errors"
	"fmt"
	"strings"

	"github.com/latscope/latscope/internal/render"
)

// BuildMany returns the page of several traces analysed together
// (render.Many): per request type the latency over every trace, a table of
// the instances and the budget summed over the traces; then the traces
// with their own findings, and the aggregate's findings.
func BuildMany(m *render.Many) (*Page, error) {
	if m == nil {
		return nil, errors.New("html report: no report")
	}
	p := &Page{Title: fmt.Sprintf("latscope — %d traces from %d instances", len(m.Traces), len(m.Instances)),
		Subtitle: strings.Join(m.Instances, ", "),
		Footer:   "latscope — where a request's wall-clock latency went, over several traces, each analysed alone and aggregated by request type."}
	var total render.Duration
	requests := 0
	for _, t := range m.Traces {
		total += t.Duration
		requests += t.Requests
	}
	p.Facts = []Fact{{"traces", fmt.Sprint(len(m.Traces))}, {"instances", fmt.Sprint(len(m.Instances))},
		{"requests", fmt.Sprint(requests)}, {"trace time", fmtMs(total.Ms())}}
	for i := range m.Groups {
		s, err := manyGroupSection(&m.Groups[i])
		if err != nil {
			return nil, err
		}
		p.Add(s)
	}
	traces, err := manyTracesSection(m)
	if err != nil {
		return nil, err
	}
	p.Add(traces, FindingsSection(&render.Report{Findings: m.Findings}))
	return p, nil
}

// manyGroupSection is one request type: its latency, the instances and
// the budget.
func manyGroupSection(g *render.ManyGroup) (Section, error) {
	q := g.Requests
	intro := fmt.Sprintf("%d requests over %d instances (%d cut by a window, excluded): mean %s, p50 %s, p90 %s, p99 %s, max %s.",
		q.Count, len(g.Instances), q.Excluded, fmtMs(q.Mean.Ms()), fmtMs(q.P50.Ms()), fmtMs(q.P90.Ms()), fmtMs(q.P99.Ms()), fmtMs(q.Max.Ms()))
	if q.Estimated {
		intro += fmt.Sprintf(" The percentiles are estimates within %s.", fmtPct(100*render.EstimateRelErr))
	}
	var worst float64
	for _, r := range g.Instances {
		worst = max(worst, r.Mean.Ms())
	}
	it := Table{Class: "compact", Caption: "Per instance; the bar is the mean against the slowest instance's.",
		Columns: []Column{{Name: "instance"}, {Name: "traces", Num: true}, {Name: "requests", Num: true},
			{Name: "mean ms", Num: true}, {Name: "p99 ms", Num: true}, {Name: "max ms", Num: true},
			{Name: "top term", Tip: "the term with the most critical time in this instance's requests"},
			{Name: "critical ms", Num: true, Tip: "the top term's critical time per request"}}}
	for _, r := range g.Instances {
		bar := 0.0
		if worst > 0 {
			bar = r.Mean.Ms() / worst
		}
		it.Rows = append(it.Rows, []Cell{{Text: r.Instance}, {Text: fmt.Sprint(r.Traces)}, {Text: fmt.Sprint(r.Requests)},
			{Text: fmt.Sprintf("%.3f", r.Mean.Ms()), Bar: bar}, {Text: fmt.Sprintf("%.3f", r.P99.Ms())}, {Text: fmt.Sprintf("%.3f", r.Max.Ms())},
			{Text: orNone(r.TopTerm)}, {Text: fmt.Sprintf("%.3f", r.TopCritical.Ms())}})
	}
	var b body
	h, err := it.HTML()
	if err != nil {
		return Section{}, err
	}
	b.raw(h)
	if len(g.Terms)+len(g.CPUTerms) > 0 {
		tt := termsTable(&render.Group{Terms: g.Terms, CPUTerms: g.CPUTerms, Requests: render.Requests{Count: q.Count}}, goWords)
		tt.Caption = "Per request over every instance: sums over the traces divided by the requests."
		if h, err = tt.HTML(); err != nil {
			return Section{}, err
		}
		b.raw(h)
	}
	return Section{Title: g.Name, Intro: intro, Body: b.html()}, nil
}

// manyTracesSection lists the traces with their instances and findings.
func manyTracesSection(m *render.Many) (Section, error) {
	t := Table{Class: "compact", Columns: []Column{{Name: "instance"}, {Name: "from", Tip: "log: the agent's instance log; file: the file's name"},
		{Name: "file"}, {Name: "ms", Num: true}, {Name: "requests", Num: true}, {Name: "findings of this trace alone"}}}
	for _, tr := range m.Traces {
		texts := make([]string, len(tr.Findings))
		for i, f := range tr.Findings {
			texts[i] = f.Text
			if f.Refuse {
				texts[i] = "refused: " + f.Text
			}
		}
		t.Rows = append(t.Rows, []Cell{{Text: tr.Instance}, {Text: tr.InstanceFrom}, {Text: tr.File}, {Text: fmt.Sprintf("%.0f", tr.Duration.Ms())},
			{Text: fmt.Sprint(tr.Requests)}, {Text: strings.Join(texts, " · "), Class: "muted"}})
	}
	h, err := t.HTML()
	if err != nil {
		return Section{}, err
	}
	return Section{Title: "Traces", Intro: "Each trace was analysed alone; predictions, the CPU cross-check and refusals stay with their trace.", Body: h}, nil
}
