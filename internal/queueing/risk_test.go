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
// On one core the CPU (2 ms a request) bounds the throughput as much:
// the lock's wait for a core gone, the CPU still holds it to 500 rps.
func TestHoldRisk(t *testing.T) {
	build := func(holdCPUMs, runMs float64) *budget.Result {
		const n, lat = 400, 12e6
		acquire := budget.Term{Frame: "Svc.updateCache", Mechanism: "io.latscope.Holds.locked", Kind: frame.Sync}
		hold := budget.Term{Frame: "Svc.updateCache", Mechanism: "on CPU, holding cache", Kind: frame.Running}
		g := &budget.Group{Name: "/order", Count: n, Latency: budget.Stats{Mean: lat}, Latencies: slices.Repeat([]int64{lat}, n),
			Running: budget.TimeStat{Wait: int64(n * runMs * 1e6), Critical: int64(n * runMs * 1e6)}, RunningExact: true,
			Terms: []budget.TermStat{
				{Term: 0, Wait: n * 0.1e6, Critical: n * 0.1e6, Requests: n},
				{Term: 1, Wait: n * 2e6, Critical: n * 2e6, CPU: int64(n * holdCPUMs * 1e6), Requests: n},
			}}
		return &budget.Result{Info: budget.TraceInfo{Start: 0, End: 1e9, Procs: 2, ProcBusy: int64(n * runMs * 1e6), JVM: true},
			Terms: []budget.Term{acquire, hold}, Groups: []*budget.Group{g}}
	}
	cases := []struct {
		name      string
		holdCPUMs float64
		spec      string
		cores     float64
		runMs     float64 // the CPU per request (2 ms unless set)
		want      bool
	}{
		{"the lock saturated, a quarter of its hold waiting for a core", 1.5, "clients=40", 0, 0, true},
		{"the lock saturated, its hold all CPU: nothing at risk", 2, "clients=40", 0, 0, false},
		{"the lock saturated, no CPU measured in it (a Go trace's hold): nothing said", 0, "clients=40", 0, 0, false},
		{"the lock not saturated", 1.5, "clients=2", 0, 0, false},
		{"the lock and one core saturated alike: the core bounds the high end", 1.5, "clients=40", 1, 0, true},
		{"one core saturated, the lock 98 % busy: the core's bound, not the lock's", 1.5, "clients=40", 1, 2.05, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := queueing.Inputs{Clients: 8, Cores: c.cores, Pools: []queueing.PoolSpec{{Name: "Svc.updateCache", Size: 1}}}
			if c.runMs == 0 {
				c.runMs = 2
			}
			p, err := queueing.Predict(build(c.holdCPUMs, c.runMs), in, []string{c.spec})
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
			// 1 / 1.5 ms without it (at most the CPU's, cores / 2 ms), 1 /
			// 2.5 ms with it doubled
			d, s := p.Model.Resources[1].DemandMs, 0.5
			high := o.After.RPS * d / (d - s)
			if c.cores > 0 {
				high = min(high, c.cores*1000/2)
			}
			if r.Station != "Svc.updateCache" || math.Abs(r.SchedMs-s) > 1e-3 || math.Abs(r.CPUMs-1.5) > 1e-3 ||
				math.Abs(r.RPSHigh-high) > 0.01 || math.Abs(r.RPSLow-o.After.RPS*d/(d+s)) > 0.01 ||
				r.RPSLow >= o.After.RPS || r.RPSHigh <= o.After.RPS || !strings.Contains(r.Text, "Svc.updateCache's bound") {
				t.Errorf("at risk %+v; demand %.3f ms, throughput %.1f", r, d, o.After.RPS)
			}
		})
	}
	// what the others used is said where the recording measured it
	// (jdk.CPULoad), not as 0 % where it did not
	for _, others := range []float64{0, 0.3} {
		res := build(1.5, 2)
		res.Info.OtherCPU = others
		in := queueing.Inputs{Clients: 8, Pools: []queueing.PoolSpec{{Name: "Svc.updateCache", Size: 1}}}
		p, err := queueing.Predict(res, in, []string{"clients=40"})
		if err != nil {
			t.Fatal(err)
		}
		r := p.Outcomes[0].AtRisk
		if r == nil {
			t.Fatalf("others %.1f: not at risk", others)
		}
		if said := strings.Contains(r.Text, "% of the cores"); said != (others > 0) || others > 0 && !strings.Contains(r.Text, "30 % of the cores") {
			t.Errorf("others %.1f: %s", others, r.Text)
		}
	}
}
