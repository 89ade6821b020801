package pipeline

import (
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/jvm"
)

// JFRDemands is a JVM recording's result as the prediction engine reads
// its demands, in analyze, compare, predict and the JVM lab alike (issue
// #36 §3, #33 item 2): the report's groups with three demands changed, the
// report's terms and everything else shared. A route's running time is all
// its requests' CPU, the CPU they used holding a lock or pooled resource
// (latscope.Hold) too, since the cores serve that as well (the report
// keeps that CPU in the holds' terms only, so that the coverage line
// counts it once); and a lock's hold (a hold no two threads ever
// overlapped) is charged, besides the hold, the mean time the lock stayed
// free at a contended hand-off while its next holder was woken
// (jvm.HandOff): no one can use it then, and at a saturating concurrency,
// which a prediction asks about, every hand-off is contended. handOff
// negative takes that mean from the analysis; zero or more charges it
// instead (the lab's diagnostics: 0 for the holds alone, the service's own
// timer). The result's Info.OtherCPU is the share of the cores the
// machine's other processes used (OthersShare), which the queueing model
// charges where the requests' wait for a CPU shows the JVM lost it. res
// itself when a is nil (no request budget).
func JFRDemands(res *budget.Result, a *jvm.Analyzer, handOff time.Duration) *budget.Result {
	if a == nil {
		return res
	}
	d := *res
	d.Info.OtherCPU = OthersShare(a)
	d.Groups = make([]*budget.Group, len(res.Groups))
	for i, g := range res.Groups {
		c := *g
		c.Terms = slices.Clone(g.Terms)
		if a.RequestCPUExact {
			c.Running.Wait += int64(a.HeldCPU[g.Name])
		}
		for j := range c.Terms {
			ts := &c.Terms[j]
			t := res.Terms[ts.Term]
			if h := a.HandOffs[t.Frame]; t.Kind == frame.Running && strings.HasPrefix(t.Mechanism, jvm.HoldMechanism) && h.Overlaps == 0 && h.Contended > 0 {
				charge := h.Mean
				if handOff >= 0 {
					charge = handOff
				}
				ts.Critical += int64(charge) * int64(ts.Requests)
			}
		}
		d.Groups[i] = &c
	}
	return &d
}

// OthersShare is the share of the machine's hardware threads (0–1) its
// other processes used over the recording: jdk.CPULoad's machineTotal
// less the JVM's user and system time. The queueing model's CPU station
// has all the cores; where the JVM had them less this (its requests
// waited for a CPU longer than its own load explains), the model charges
// each CPU demand by 1 / (1 − share), as a background utilisation U is
// taken into a station's demand (queueing's chargeOthers). 0 without
// jdk.CPULoad.
func OthersShare(a *jvm.Analyzer) float64 {
	_, jvmShare, machineShare, ok := a.CPULoad()
	if !ok {
		return 0
	}
	return min(1, max(0, machineShare-jvmShare))
}
