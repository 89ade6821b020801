package queueing_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/queueing"
)

// TestHoldRisk: a what-if that saturates a lock whose hold the input
// measured the CPU of says that its throughput is the lock's bound and how
// far the bound moves with the hold's time neither CPU nor a recorded wait
// (gone: up; doubled: down). 8 clients, 400 requests a second of 12 ms:
// a lock held 2 ms, 1.5 ms of it CPU, 0.5 ms waiting for a core; 10 ms of
// a delay. At 40 clients the lock is the bottleneck (1 / 2 ms = 500 rps).
func TestHoldRisk(t *testing.T) {
	build := func(holdCPUMs float64) *budget.Result {
		const n, lat = 400, 12e6
		acquire := budget.Term{Frame: "Svc.updateCache", Mechanism: "io.latscope.Holds.locked", Kind: frame.Sync}
		hold := budget.Term{Frame: "Svc.updateCache", Mechanism: "on CPU, holding cache", Kind: frame.Running}
		g := &budget.Group{Name: "/order", Count: n, Latency: budget.Stats{Mean: lat}, Latencies: slices.Repeat([]int64{lat}, n),
			Running: budget.TimeStat{Wait: n * 2e6, Critical: n * 2e6}, RunningExact: true,
			Terms: []budget.TermStat{
				{Term: 0, Wait: n * 0.1e6, Critical: n * 0.1e6, Requests: n},
				{Term: 1, Wait: n * 2e6, Critical: n * 2e6, CPU: int64(n * holdCPUMs * 1e6), Requests: n},
			}}
		return &budget.Result{Info: budget.TraceInfo{Start: 0, End: 1e9, Procs: 2, ProcBusy: n * 2e6, JVM: true},
			Terms: []budget.Term{acquire, hold}, Groups: []*budget.Group{g}}
	}
	in := queueing.Inputs{Clients: 8, Pools: []queueing.PoolSpec{{Name: "Svc.updateCache", Size: 1}}}
	cases := []struct {
		name      string
		holdCPUMs float64
		spec      string
		want      bool
	}{
		{"the lock saturated, a quarter of its hold waiting for a core", 1.5, "clients=40", true},
		{"the lock saturated, its hold all CPU: nothing at risk", 2, "clients=40", false},
		{"the lock saturated, no CPU measured in it (a Go trace's hold): nothing said", 0, "clients=40", false},
		{"the lock not saturated", 1.5, "clients=2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := queueing.Predict(build(c.holdCPUMs), in, []string{c.spec})
			if err != nil {
				t.Fatal(err)
			}
			o := p.Outcomes[0]
			r := o.AtRisk
			if (r != nil) != c.want {
				t.Fatalf("at risk %+v; want %v (after %+v)", r, c.want, o.After)
			}
			if r == nil {
				return
			}
			// the hold's demand is 2 ms, 0.5 of it scheduling: the bound
			// 1 / 1.5 ms without it, 1 / 2.5 ms with it doubled
			d, s := p.Model.Resources[1].DemandMs, 0.5
			if r.Station != "Svc.updateCache" || math.Abs(r.SchedMs-s) > 1e-3 || math.Abs(r.CPUMs-1.5) > 1e-3 ||
				math.Abs(r.RPSHigh-o.After.RPS*d/(d-s)) > 0.01 || math.Abs(r.RPSLow-o.After.RPS*d/(d+s)) > 0.01 ||
				r.RPSLow >= o.After.RPS || r.RPSHigh <= o.After.RPS || !strings.Contains(r.Text, "Svc.updateCache's bound") {
				t.Errorf("at risk %+v; demand %.3f ms, throughput %.1f", r, d, o.After.RPS)
			}
		})
	}
}
