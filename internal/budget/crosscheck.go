package budget

import (
	"fmt"
	"time"

	"github.com/latscope/latscope/internal/units"
)

// RunningExcess is the ratio of trace running time in requests to the
// process's own CPU time above which threads were off-CPU while Go counted
// them running: unthrottled the ratio was 0.91, under a 20 % CFS quota
// 1.77 (docs/method.md §6, "Running above CPU").
const RunningExcess = 1.3

// Counter is the independent CPU instrument of docs/method.md §6: the
// process's own CPU time over the trace window, and the cores it may use.
type Counter struct {
	CPU   time.Duration // utime+stime over the window
	Cores float64       // cores the process may use; 0 = GOMAXPROCS in the trace
}

// CrossCheck judges the trace against the independent counter c: trace
// running time well above the CPU the process used (FindCPUMismatch), and
// which of the process or the host was short of CPU (FindCPUSaturated,
// FindHostBusy). The trace alone cannot tell the last two apart: Ps count
// as running while their threads wait for a CPU that other processes hold;
// with a counter these findings replace the trace-only FindCPUSaturated.
func CrossCheck(res *Result, c Counter) []*Finding {
	var out []*Finding
	var running time.Duration
	for _, g := range res.Groups {
		running += time.Duration(g.Running.Wait)
	}
	if c.CPU > 0 {
		if r := float64(running) / float64(c.CPU); r > RunningExcess {
			out = append(out, &Finding{Kind: FindCPUMismatch, Text: fmt.Sprintf(
				"the trace shows %.1f ms running in requests but the process used %.1f ms of CPU in the whole window (%.2f×): threads were off-CPU while Go counted them running — other processes competing for the CPUs, CFS throttling, or a paused process; check PSI and the cgroup's cpu.stat",
				units.Ms(running), units.Ms(c.CPU), r)})
		}
	}
	if f := saturation(res, c); f != nil {
		out = append(out, f)
	}
	return out
}

// saturation says, from the process's own counter, whether the process or
// only the host was short of CPU.
func saturation(res *Result, c Counter) *Finding {
	d := float64(res.Info.Duration())
	procs := float64(res.Info.Procs)
	if d <= 0 || procs <= 0 {
		return nil
	}
	cores := c.Cores
	if cores <= 0 {
		cores = procs
	}
	used := float64(c.CPU) / (d * cores)
	busy := float64(res.Info.BusyOutsideCalls()) / (d * procs)
	switch {
	case used > SaturatedBusy:
		return &Finding{Kind: FindCPUSaturated, Text: fmt.Sprintf("the process is CPU-saturated: its own counter shows it used %.0f%% of %g cores over the window, so latency contains CPU queueing; a budget taken now overstates every wait", 100*used, cores)}
	case busy > SaturatedBusy:
		return &Finding{Kind: FindHostBusy, Text: fmt.Sprintf("the host, not the process, was short of CPU: Ps were running %.0f%% of the trace outside system calls (GOMAXPROCS %d) but the process used only %.0f%% of %g cores by its own counter — its threads waited for CPUs that other processes or CFS throttling held, and that time shows as running", 100*busy, res.Info.Procs, 100*used, cores)}
	}
	return nil
}
