package seed

import (
	"bytes"
	"fmt"

	htmlreport "github.com/latscope/latscope/internal/report/html"

	"github.com/latscope/latscope/lab"
)

// page renders the scenario's report as one self-contained HTML file: the
// profile disagreement, the modes, predictions next to measurements, the
// coverage and the checks, then the serial trace's own analysis.
func page(res *Result, med map[string]*ModeRun, checks []lab.Check) ([]byte, error) {
	p := &htmlreport.Page{Title: "latscope-lab seed — where did the time go, and which fix helps?",
		Subtitle: fmt.Sprintf("profile %q: %d clients, warm-up %s excluded, %s traced per run, %d run(s) per mode", res.Profile.Name, res.Profile.Clients, res.Profile.Warmup, res.Profile.Window, res.Profile.Runs)}
	p.Facts = []htmlreport.Fact{
		{Name: "serial mean", Value: fmt.Sprintf("%.1f ms", group(med["serial"]).Requests.Mean.Ms())},
		{Name: "concurrent mean", Value: fmt.Sprintf("%.1f ms", group(med["concurrent"]).Requests.Mean.Ms())},
		{Name: "checks", Value: lab.Summary(checks)},
	}
	for _, pc := range res.Predictions {
		if pc.Spec == SerialPredictions[0] {
			p.Facts = append(p.Facts, htmlreport.Fact{Name: "overlap prediction error", Value: fmt.Sprintf("%+.1f %%", pc.ErrorPct)})
		}
	}
	secs := []func() (htmlreport.Section, error){
		func() (htmlreport.Section, error) { return disagreeSection(res), nil },
		func() (htmlreport.Section, error) { return modesSection(med) },
		func() (htmlreport.Section, error) { return predictSection(res) },
		func() (htmlreport.Section, error) { return checksSection(checks) },
	}
	for _, f := range secs {
		s, err := f()
		if err != nil {
			return nil, err
		}
		p.Add(s)
	}
	serial := med["serial"].Report
	more, err := htmlreport.Analysis(serial, nil, htmlreport.DefaultOptions)
	if err != nil {
		return nil, err
	}
	for i := range more {
		more[i].Title = "Serial trace: " + more[i].Title
		more[i].ID = ""
	}
	p.Add(more...)
	p.Add(htmlreport.FindingsSection(serial))
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func disagreeSection(res *Result) htmlreport.Section {
	c := htmlreport.BarChart{Label: "share of in-handler time per segment", Unit: "% of in-handler time (serial mode)",
		Series: []htmlreport.Series{{Name: "wall clock (trace)", Color: htmlreport.Palette[0]}, {Name: "CPU profile (samples)", Color: htmlreport.Palette[1]}}}
	for _, r := range res.Disagree {
		c.Rows = append(c.Rows, htmlreport.BarRow{Label: r.Segment, Values: []float64{r.WallPct, r.CPUPct}})
	}
	return htmlreport.Section{Title: "Two profiles, two different answers",
		Intro: fmt.Sprintf("The CPU profile ranks %s first; the wall clock ranks %s first.", lab.TopSegment(res.Disagree, true), lab.TopSegment(res.Disagree, false)),
		Body:  c.SVG()}
}

func modesSection(med map[string]*ModeRun) (htmlreport.Section, error) {
	t := htmlreport.Table{Columns: []htmlreport.Column{{Name: "mode"}, {Name: "rps", Num: true}, {Name: "mean ms", Num: true}, {Name: "p50 ms", Num: true},
		{Name: "p99 ms", Num: true}, {Name: "CPU ms / request", Num: true, Tip: "process utime+stime / requests: independent of the tracer"}}}
	for _, m := range Modes {
		r := med[m]
		t.Rows = append(t.Rows, []htmlreport.Cell{{Text: m}, {Text: fmt.Sprintf("%.1f", r.Load.RPS)}, {Text: fmt.Sprintf("%.2f", r.Load.MeanMs)},
			{Text: fmt.Sprintf("%.2f", r.Load.P50Ms)}, {Text: fmt.Sprintf("%.2f", r.Load.P99Ms)}, {Text: fmt.Sprintf("%.2f", r.CPUPerMs)}})
	}
	body, err := t.HTML()
	return htmlreport.Section{Title: "Modes", Intro: "Client side, every request of the measured window.", Body: body}, err
}

func predictSection(res *Result) (htmlreport.Section, error) {
	c := htmlreport.BarChart{Label: "predicted and measured mean latency", Unit: "mean latency, ms",
		Series: []htmlreport.Series{{Name: "predicted", Color: htmlreport.Palette[3], Light: true}, {Name: "measured", Color: htmlreport.Palette[3]}}}
	t := htmlreport.Table{Columns: []htmlreport.Column{{Name: "what-if"}, {Name: "from"}, {Name: "measured in"}, {Name: "predicted gain", Num: true},
		{Name: "measured gain", Num: true}, {Name: "error", Num: true}, {Name: "predicted rps", Num: true}, {Name: "measured rps", Num: true}}}
	for _, p := range res.Predictions {
		c.Rows = append(c.Rows, htmlreport.BarRow{Label: p.Spec, Note: "from " + p.From + ", measured in " + p.Against, Values: []float64{p.PredictedMs, p.MeasuredMs}})
		e := fmt.Sprintf("%+.1f %%", p.ErrorPct) + lab.Bracket(p.ErrorInterval)
		if p.Against == "fixed vs concurrent" {
			e = "—"
		}
		t.Rows = append(t.Rows, []htmlreport.Cell{{Text: p.Spec}, {Text: p.From}, {Text: p.Against}, {Text: fmt.Sprintf("%.1f %%", p.PredictedGain) + lab.Bracket(p.PredictedGainInterval)},
			{Text: fmt.Sprintf("%.1f %%", p.MeasuredGain) + lab.Bracket(p.MeasuredGainInterval)}, {Text: e}, {Text: fmt.Sprintf("%.1f", p.PredictedRPS)}, {Text: fmt.Sprintf("%.1f", p.MeasuredRPS)}})
	}
	tab, err := t.HTML()
	return htmlreport.Section{Title: "Predictions, then measurements",
		Intro: "Predicted from one trace before the change was made, measured by making it. In brackets, 95 % intervals.", Body: c.SVG() + tab}, err
}

func checksSection(checks []lab.Check) (htmlreport.Section, error) {
	t := lab.ChecksTable(checks)
	body, err := t.HTML()
	return htmlreport.Section{Title: "Checks", Intro: "Tolerances come from the method, not from tuning; each estimate is judged by its 95 % interval (docs/lab.md).", Body: body}, err
}
