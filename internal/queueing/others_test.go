package queueing_test

import (
	"math"
	"slices"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/queueing"
)

// TestChargeOthers: a JVM recording's CPU demand is charged by
// 1 / (1 − the others' share) only where the service's wait for a CPU (its
// unknown time: in no recorded wait, not its measured CPU) is longer than
// the model of its own load explains by compare's bar, 5 % of the mean.
// 8 clients, 200 requests a second of 20 ms: 2 ms of measured CPU on 2
// cores (20 % busy: its own queue is about 0.1 ms), 10 ms of a delay, and
// the rest of the mean unknown.
func TestChargeOthers(t *testing.T) {
	build := func(unknownMs, others float64) *queueing.Model {
		t.Helper()
		const n, lat = 200, 20e6
		g := &budget.Group{Name: "/order", Count: n, Latency: budget.Stats{Mean: lat}, Latencies: slices.Repeat([]int64{lat}, n),
			Running: budget.TimeStat{Wait: n * 2e6, Critical: n * 2e6}, RunningExact: true, Unknown: int64(n * unknownMs * 1e6)}
		res := &budget.Result{Info: budget.TraceInfo{Start: 0, End: 1e9, Procs: 2, ProcBusy: n * 2e6, JVM: true, OtherCPU: others},
			Groups: []*budget.Group{g}}
		m, err := queueing.Build(res, queueing.Inputs{Clients: 8})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		name             string
		unknownMs, other float64
		want             float64 // the share charged
	}{
		{"the wait its own load explains: the others took nothing from it", 0.1, 0.4, 0},
		{"a wait under the bar over its own: noise, not charged", 0.1 + 0.04*20, 0.4, 0},
		{"a wait well over its own: the others' share charged", 4, 0.4, 0.4},
		{"no others' share known: nothing charged", 4, 0, 0},
		{"the others' share bounded", 4, 0.99, 0.95},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := build(c.unknownMs, c.other)
			cpu := m.Resources[0]
			if m.OthersShare != c.want || math.Abs(cpu.DemandMs-2/(1-c.want)) > 1e-9 || m.OthersGiven != c.other {
				t.Errorf("charged %.3g (given %.3g, own wait %.3g ms against %.3g measured), CPU demand %.4g ms; want %.3g, %.4g ms",
					m.OthersShare, m.OthersGiven, m.OwnWaitMs, cpu.WaitMs, cpu.DemandMs, c.want, 2/(1-c.want))
			}
		})
	}
}
