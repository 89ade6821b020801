package jvm

import (
	"bytes"
	"fmt"

	htmlreport "github.com/latscope/latscope/internal/report/html"
	"github.com/latscope/latscope/lab"
)

// page renders the scenario's report as one self-contained HTML file: the
// profile disagreement, the modes, predictions next to measurements, the
// two instruments, the burst path and the checks.
func page(res *Result, checks []lab.Check) ([]byte, error) {
	p := &htmlreport.Page{Title: "latscope-lab jvm — the seed experiment on the JVM",
		Subtitle: fmt.Sprintf("profile %q: %d clients, a JDK service with io.latscope, pgjdbc, JFR after warm-up; load average %.1f at the start",
			res.Profile.Name, res.Profile.Clients, res.Config.LoadAvgAtStart)}
	for _, r := range res.Runs {
		p.Facts = append(p.Facts, htmlreport.Fact{Name: r.Mode + " mean", Value: fmt.Sprintf("%.1f ms", r.MeanMs)})
	}
	for _, pc := range res.Predictions {
		if pc.Spec == SerialPredictions[0] {
			p.Facts = append(p.Facts, htmlreport.Fact{Name: "overlap prediction error", Value: fmt.Sprintf("%+.1f %%", pc.ErrorPct)})
		}
	}
	p.Facts = append(p.Facts, htmlreport.Fact{Name: "checks", Value: lab.Summary(checks)})

	c := htmlreport.BarChart{Label: "share of the four segments", Unit: "% (serial mode)",
		Series: []htmlreport.Series{{Name: "wall clock (the service's own timings)", Color: htmlreport.Palette[0]}, {Name: "CPU profile (JFR samples)", Color: htmlreport.Palette[1]}}}
	for _, r := range res.Disagree {
		c.Rows = append(c.Rows, htmlreport.BarRow{Label: r.Segment, Values: []float64{r.WallPct, r.CPUPct}})
	}
	p.Add(htmlreport.Section{Title: "Two profiles, two different answers",
		Intro: fmt.Sprintf("The CPU profile ranks %s first; the wall clock ranks %s first.", lab.TopSegment(res.Disagree, true), lab.TopSegment(res.Disagree, false)), Body: c.SVG()})

	modes := htmlreport.Table{Columns: []htmlreport.Column{{Name: "mode"}, {Name: "rps", Num: true}, {Name: "mean ms", Num: true}, {Name: "own handler mean ms", Num: true},
		{Name: "JFR critical waits ms", Num: true}, {Name: "CPU ms / request", Num: true, Tip: "process utime+stime / requests: independent of JFR"}, {Name: "covered", Num: true}}}
	for _, r := range res.Runs {
		modes.Rows = append(modes.Rows, []htmlreport.Cell{{Text: r.Mode}, {Text: fmt.Sprintf("%.1f", r.Load.RPS)}, {Text: fmt.Sprintf("%.2f", r.MeanMs)},
			{Text: fmt.Sprintf("%.2f", r.Own.Total)}, {Text: fmt.Sprintf("%.2f", r.JFR.Critical)}, {Text: fmt.Sprintf("%.2f", r.CPUPerMs)}, {Text: fmt.Sprintf("%.1f %%", coverage(r))}})
	}
	if err := addTable(p, "Modes and the two instruments", "JFR's critical waits plus the process's CPU per request against the mean.", modes); err != nil {
		return nil, err
	}

	pc := htmlreport.BarChart{Label: "predicted and measured mean latency", Unit: "mean latency, ms",
		Series: []htmlreport.Series{{Name: "predicted", Color: htmlreport.Palette[3], Light: true}, {Name: "measured", Color: htmlreport.Palette[3]}}}
	for _, x := range res.Predictions {
		pc.Rows = append(pc.Rows, htmlreport.BarRow{Label: x.Spec, Note: "from " + x.From + ", measured in " + x.Against, Values: []float64{x.PredictedMs, x.MeasuredMs}})
	}
	p.Add(htmlreport.Section{Title: "Predictions, then measurements", Intro: res.PredictionSource + ".", Body: pc.SVG()})

	bt := htmlreport.Table{Columns: []htmlreport.Column{{Name: "variant"}, {Name: "tasks / request", Num: true}, {Name: "mean ms", Num: true},
		{Name: "CPU ms / request", Num: true}, {Name: "pool machinery", Num: true}, {Name: "churn"}}}
	for _, r := range res.Bursts {
		bt.Rows = append(bt.Rows, []htmlreport.Cell{{Text: r.Variant}, {Text: fmt.Sprintf("%.0f", r.ForksPerReq)}, {Text: fmt.Sprintf("%.3f", r.MeanMs)},
			{Text: fmt.Sprintf("%.3f", r.CPUPerMs)}, {Text: fmt.Sprintf("%.1f %% (%d samples)", r.Churn.Share, r.Churn.Samples)}, {Text: yesNo(r.Churn.Flagged)}})
	}
	if err := addTable(p, "ForkJoinPool bursts", "Fan-out (one task per item) against the fix (one task per request); the churn verdict is package sched's (its JVM churn analysis).", bt); err != nil {
		return nil, err
	}
	if err := saturateHTML(p, res.Saturate); err != nil {
		return nil, err
	}
	if err := addTable(p, "Checks", "Tolerances come from the method, not from tuning (docs/lab-jvm.md); each estimate is judged by its 95 % interval (docs/lab.md).", lab.ChecksTable(checks)); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func addTable(p *htmlreport.Page, title, intro string, t htmlreport.Table) error {
	body, err := t.HTML()
	if err != nil {
		return err
	}
	p.Add(htmlreport.Section{Title: title, Intro: intro, Body: body})
	return nil
}
