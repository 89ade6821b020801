package render

import (
	"fmt"
	"math"

	"github.com/latscope/latscope/internal/units"
)

// HostCheck sets the CPU the two traces' Ps had per second of running side
// by side (Trace.ProcCPUShare, from each trace's CPU samples): a prediction
// carries the first trace's, so where the host lent the second less CPU per
// running second (other processes, CFS throttling, more Ps than CPUs, the
// kernel's placement of the runtime's threads), its CPU-bound time is longer for that alone,
// and a miss may be the host's rather than the model's.
type HostCheck struct {
	Before      float64 `json:"before_proc_cpu_share"`
	BeforeBound float64 `json:"before_bound"`
	After       float64 `json:"after_proc_cpu_share"`
	AfterBound  float64 `json:"after_bound"`
	// Differs says the two shares differ by more than their bounds
	// together. RunningPct is how much longer (negative: shorter) the Ps
	// ran per second of CPU in the second trace, Before / After − 1 in
	// percent: how much longer the same CPU work may run there for the
	// host alone — "may": a request's own running time can move less than
	// the Ps' (docs/method.md §6, "Running above CPU").
	Differs    bool    `json:"differs"`
	RunningPct float64 `json:"running_change_pct"`
}

// hostCheck compares the traces' shares; nil unless both have one.
func hostCheck(before, after Trace) *HostCheck {
	if before.ProcCPUShare == nil || after.ProcCPUShare == nil || *after.ProcCPUShare <= 0 {
		return nil
	}
	// traceJSON sets a share and its bound together
	h := &HostCheck{Before: *before.ProcCPUShare, BeforeBound: *before.ProcCPUShareBound, After: *after.ProcCPUShare, AfterBound: *after.ProcCPUShareBound}
	h.Differs = math.Abs(h.Before-h.After) > h.BeforeBound+h.AfterBound
	h.RunningPct = units.Round3(100 * (h.Before/h.After - 1))
	return h
}

// text is the comparison's line on the host, "" when the shares agree
// within their bounds.
func (h *HostCheck) text() string {
	if h == nil || !h.Differs {
		return ""
	}
	lent, longer := "less", "longer"
	if h.After > h.Before {
		lent, longer = "more", "shorter"
	}
	return fmt.Sprintf("the Ps' threads had a CPU for %.0f%% (±%.0f%%) of the Ps' running time outside system calls in the second trace, %.0f%% (±%.0f%%) in the first (CPU samples): the host lent the second %s CPU per running second (other processes, CFS throttling, more Ps than the CPUs the process may use, or the kernel's placement of the runtime's threads). The predictions carry the first trace's: per second of CPU the Ps ran %.0f%% %s in the second, so its running time may be up to as much %s for the host alone, and a miss on CPU-bound time may be the host's, not the model's",
		100*h.After, 100*h.AfterBound, 100*h.Before, 100*h.BeforeBound, lent, math.Abs(h.RunningPct), longer, longer)
}
