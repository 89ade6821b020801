package render

import (
	"errors"
	"fmt"

	"github.com/latscope/latscope/budget"
)

// Cross-check thresholds (design §5, §9).
const (
	// RunningExcess: trace Running time above this multiple of the
	// independent CPU means threads were off-CPU while Go thought they ran
	// (CFS throttling measured 1.77× at 20 % quota; 0.91 unthrottled).
	RunningExcess = 1.3
	// CoverageLow and CoverageHigh bound the independent-CPU coverage that
	// counts as explained (the seed reached 99.8 %).
	CoverageLow, CoverageHigh = 95.0, 103.0
)

func findingsJSON(res *budget.Result, rep *Report, in Inputs) []FindingJSON {
	out := []FindingJSON{}
	for _, w := range res.Warnings {
		var f *budget.Finding
		if errors.As(w, &f) {
			out = append(out, FindingJSON{Kind: f.Kind.String(), Group: f.Group, Text: f.Text, Refuse: f.Refuse})
		}
	}
	if in.CPUSeconds < 0 || len(rep.Groups) == 0 {
		return out
	}
	var running float64
	for _, g := range res.Groups {
		running += float64(g.Running.Wait)
	}
	if cpu := in.CPUSeconds * 1e9; cpu > 0 && running/cpu > RunningExcess {
		out = append(out, FindingJSON{Kind: "running-exceeds-cpu", Text: fmt.Sprintf(
			"the trace shows %.1f ms running in requests but the process used %.1f ms of CPU in the whole window (%.2f×): threads were off-CPU while Go counted them running — other processes competing for the CPUs, CFS throttling, or a paused process; check PSI and the cgroup's cpu.stat",
			running/1e6, cpu/1e6, running/cpu)})
	}
	if d := float64(res.Info.Duration()); d > 0 && in.Cores > 0 && in.CPUSeconds*1e9/(d*in.Cores) > budget.SaturatedBusy {
		out = append(out, FindingJSON{Kind: "cpu-saturated", Text: fmt.Sprintf("the process used %.0f%% of %g cores over the window: latency contains CPU queueing", 100*in.CPUSeconds*1e9/(d*in.Cores), in.Cores)})
	}
	p := rep.Groups[0]
	if c := p.Coverage.IndependentPct; c != nil && (*c < CoverageLow || *c > CoverageHigh) {
		out = append(out, FindingJSON{Kind: "coverage", Group: p.Name, Text: fmt.Sprintf(
			"%s: critical-path waits plus independent CPU explain %.1f%% of the mean (%.1f ms unexplained); outside %g–%g%% the budget misses something (CPU outside requests divided in, throttling, or time the trace cannot see)",
			p.Name, *c, *p.Coverage.UnexplainedMs, CoverageLow, CoverageHigh)})
	}
	return out
}
