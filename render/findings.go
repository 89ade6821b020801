package render

import (
	"errors"
	"fmt"

	"github.com/latscope/latscope/budget"
)

// Cross-check thresholds (docs/method.md §6).
const (
	// RunningExcess: trace Running time above this multiple of the
	// independent CPU means threads were off-CPU while Go thought they ran
	// (CFS throttling measured 1.77× at 20 % quota; 0.91 unthrottled;
	// docs/method.md §6).
	RunningExcess = 1.3
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
	var running float64
	for _, g := range res.Groups {
		running += float64(g.Running.Wait)
	}
	if cpu := in.CPUSeconds * 1e9; cpu > 0 && running/cpu > RunningExcess {
		out = append(out, FindingJSON{Kind: "running-exceeds-cpu", Text: fmt.Sprintf(
			"the trace shows %.1f ms running in requests but the process used %.1f ms of CPU in the whole window (%.2f×): threads were off-CPU while Go counted them running — other processes competing for the CPUs, CFS throttling, or a paused process; check PSI and the cgroup's cpu.stat",
			running/1e6, cpu/1e6, running/cpu)})
	}
	out = append(out, saturation(res, in)...)
	p := rep.Groups[0]
	if c := p.Coverage.IndependentPct; c != nil && (*c < CoverageLow || *c > CoverageHigh) {
		out = append(out, FindingJSON{Kind: "coverage", Group: p.Name, Text: fmt.Sprintf(
			"%s: critical-path waits plus independent CPU explain %.1f%% of the mean (%.1f ms unexplained); outside %g–%g%% the budget misses something (CPU outside requests divided in, throttling, or time the trace cannot see)",
			p.Name, *c, *p.Coverage.UnexplainedMs, CoverageLow, CoverageHigh)})
	}
	return out
}

// saturation says, from the process's own CPU counter, whether the process
// or only the host was short of CPU. The trace alone cannot tell them
// apart: Ps count as running while their threads wait for a CPU that
// other processes hold.
func saturation(res *budget.Result, in Inputs) []FindingJSON {
	d := float64(res.Info.Duration())
	procs := float64(res.Info.Procs)
	if d <= 0 || procs <= 0 {
		return nil
	}
	cores := in.Cores
	if cores <= 0 {
		cores = procs
	}
	used := in.CPUSeconds * 1e9 / (d * cores)
	busy := float64(res.Info.ProcBusy) / (d * procs)
	switch {
	case used > budget.SaturatedBusy:
		return []FindingJSON{{Kind: "cpu-saturated", Text: fmt.Sprintf("the process is CPU-saturated: its own counter shows it used %.0f%% of %g cores over the window, so latency contains CPU queueing; a budget taken now overstates every wait", 100*used, cores)}}
	case busy > budget.SaturatedBusy:
		return []FindingJSON{{Kind: "host-busy", Text: fmt.Sprintf("the host, not the process, was short of CPU: Ps were running %.0f%% of the trace (GOMAXPROCS %d) but the process used only %.0f%% of %g cores by its own counter — its threads waited for CPUs that other processes or CFS throttling held, and that time shows as running", 100*busy, res.Info.Procs, 100*used, cores)}}
	}
	return nil
}
