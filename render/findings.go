package render

import (
	"errors"
	"fmt"
	"time"

	"github.com/latscope/latscope/budget"
)

// Cross-check thresholds (docs/method.md §6).
const (
	// CoverageLow and CoverageHigh bound the independent-CPU coverage that
	// counts as explained (docs/method.md §6: the seed experiment reached
	// 99.8 %).
	CoverageLow, CoverageHigh = 95.0, 103.0
)

func findingsJSON(res *budget.Result, rep *Report, in Inputs) []FindingJSON {
	out := []FindingJSON{}
	for _, w := range res.Warnings {
		var f *budget.Finding
		if errors.As(w, &f) {
			if f.Kind == budget.FindCPUSaturated && in.CPUSeconds >= 0 {
				continue // the process's own counter decides below
			}
			out = append(out, FindingJSON{Kind: f.Kind.String(), Group: f.Group, Text: f.Text, Refuse: f.Refuse})
		}
	}
	if in.CPUSeconds < 0 || len(rep.Groups) == 0 {
		return out
	}
	for _, f := range budget.CrossCheck(res, budget.Counter{CPU: time.Duration(in.CPUSeconds * 1e9), Cores: in.Cores}) {
		out = append(out, FindingJSON{Kind: f.Kind.String(), Group: f.Group, Text: f.Text, Refuse: f.Refuse})
	}
	p := rep.Groups[0]
	if c := p.Coverage.IndependentPct; c != nil && (*c < CoverageLow || *c > CoverageHigh) {
		out = append(out, FindingJSON{Kind: "coverage", Group: p.Name, Text: fmt.Sprintf(
			"%s: critical-path waits plus independent CPU explain %.1f%% of the mean (%.1f ms unexplained); outside %g–%g%% the budget misses something (CPU outside requests divided in, throttling, or time the trace cannot see)",
			p.Name, *c, *p.Coverage.UnexplainedMs, CoverageLow, CoverageHigh)})
	}
	return out
}
