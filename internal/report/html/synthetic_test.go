package htmlreport_test

import (
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/render"
)

// synthetic returns a small hand-made report and result: deterministic,
// with every section populated, and name in every place user text goes.
func synthetic(name string) (*render.Report, *budget.Result) {
	ms := func(x float64) render.Duration { return render.Duration(x * 1e6) }
	durp := func(d render.Duration) *render.Duration { return &d }
	lat := []int64{}
	for i := range 60 {
		lat = append(lat, int64(150e6+float64(i%7)*1.5e6+float64(i/20)*2e6))
	}
	lat = append(lat, 191e6)
	path := func(task uint64, l float64) *render.Path {
		return &render.Path{Task: task, Latency: ms(l), Goroutines: 2, Segments: []render.Segment{
			{Start: ms(0), Dur: ms(1), Goroutine: 7, Kind: "running"},
			{Start: ms(1), Dur: ms(90), Goroutine: 9, Kind: "network", Term: name + ".callUpstream [net/http.(*persistConn).roundTrip, select]", Borrowed: true},
			{Start: ms(91), Dur: ms(10), Goroutine: 9, Kind: "select", Term: name + ".callUpstream [net/http.(*persistConn).roundTrip, select]", Borrowed: true},
			{Start: ms(101), Dur: ms(0.2), Goroutine: 7, Kind: "runnable"},
			{Start: ms(101.2), Dur: ms(l - 104.2), Goroutine: 7, Kind: "network", Term: name + ".queryDB [net.(*netFD).Read, network]"},
			{Start: ms(l - 3), Dur: ms(2), Goroutine: 7, Kind: "sync", Term: name + ".locked [sync.(*Mutex).Lock, sync]", Contention: true},
			{Start: ms(l - 1), Dur: ms(0.6), Goroutine: 7, Kind: "running", Unknown: true},
			{Start: ms(l - 0.4), Dur: ms(0.4), Goroutine: 7, Kind: "running", Term: name + ".locked [running]"},
		}}
	}
	g := render.Group{
		Name:     name,
		Requests: render.Requests{Count: len(lat), Excluded: 3, ExcludedBefore: 1, ExcludedAfter: 2, Forked: 0, Mean: ms(155.6), Min: ms(150), P50: ms(154.5), P90: ms(160), P99: ms(191), Max: ms(191), RPS: 25.2},
		Terms: []render.Term{
			{Frame: "example.com/svc/" + name + ".callUpstream", Mechanism: "net/http.(*persistConn).roundTrip", Kind: "select", Wait: ms(100), SharePct: 64.3, Critical: ms(100), CriticalPct: 64.3, FixPotential: ms(99), Requests: 61, Causes: map[string]render.Duration{"network": ms(90), "select": ms(10)}},
			{Frame: "example.com/svc/" + name + ".queryDB", Mechanism: "net.(*netFD).Read", Kind: "network", Wait: ms(50), SharePct: 32.1, Critical: ms(50), CriticalPct: 32.1, FixPotential: ms(50), Requests: 61},
			{Frame: "example.com/svc/" + name + ".locked", Mechanism: "sync.(*Mutex).Lock", Kind: "sync", Wait: ms(2), SharePct: 1.3, Critical: ms(2), CriticalPct: 1.3, FixPotential: ms(1.5), Contention: ms(2), Requests: 30},
			{Frame: "", Mechanism: "syscall.read", Kind: "syscall", Wait: ms(0.1), SharePct: 0.06, Critical: ms(0.1), CriticalPct: 0.06, Requests: 61},
		},
		CPUTerms: []render.Term{
			{Frame: "example.com/svc/" + name + ".locked", AppPath: []string{"example.com/svc/" + name + ".handler", "example.com/svc/" + name + ".locked"},
				Kind: "running", Wait: ms(2.1), SharePct: 1.35, Critical: ms(2.1), CriticalPct: 1.35, FixPotential: ms(2.1), Requests: 61},
			{Frame: "example.com/svc/" + name + ".handler", AppPath: []string{"example.com/svc/" + name + ".handler"}, Kind: "running", Beneath: true,
				Wait: ms(0.5), SharePct: 0.32, Critical: ms(0.4), CriticalPct: 0.26, FixPotential: ms(0.4), Requests: 61},
		},
		CPU: render.CPU{Running: ms(3), Runnable: ms(0.4), CriticalRunning: ms(2.9), CriticalRunnable: ms(0.4),
			ByFrame: &render.CPUByFrame{FromSamples: ms(2.1), FromStacks: ms(0.5), Unattributed: ms(0.4), CriticalAttributed: ms(2.5), CriticalUnattributed: ms(0.4)}},
		Coverage: render.Coverage{WaitSumPct: 97.7, GoroutineSumPct: 100, CriticalPct: 100, Unknown: ms(0.1)},
		Regions: []render.Region{{Name: "upstream", Wall: ms(100), WallPct: 64, CPUSamples: 0}, {Name: "db", Wall: ms(50), WallPct: 32},
			{Name: name, Wall: ms(3), WallPct: 2, CPUSamples: 12, CPUPct: 60}, {Name: "", Wall: ms(0.1), WallPct: 0.1, CPUSamples: 8, CPUPct: 40}},
		Predictions: []render.Prediction{{Spec: "remove=" + name, Mean: ms(55), P99: ms(70), DeltaPct: -64.7, RPS: 70, Limit: "clients (3.9 / mean)",
			Method: "timeline simulation", Why: "no queue in play: the largest modelled queue, CPU, is 0.03 ms per request (under 1 % of the mean)", MeanLow: durp(ms(54.1)), MeanHigh: durp(ms(55.9))},
			{Spec: "scale=queryDB:2", Mean: ms(205), P99: ms(240), DeltaPct: 31.7, RPS: 19, Limit: "clients (3.9 / mean)",
				Method: "timeline simulation", Why: "no queue modelled: " + name + " has no pool sized"},
			{Spec: "pool=" + name + ":4", Mean: ms(120), DeltaPct: -22.9, RPS: 32, Limit: "bottleneck " + name,
				Method: "queueing model", Why: "changes the queueing model's inputs; queue at pool " + name + ": 36 ms per request before, 0.8 ms after", MeanLow: durp(ms(113.2)), MeanHigh: durp(ms(126.8))}},
		Throughput: render.Throughput{Clients: 3.9, ClientsEstimated: true, Cores: 2, CPUPerRequest: ms(3), CPUCapRPS: 666, MeasuredRPS: 25.2, PredictedRPS: 25.1},
		Median:     path(13, 154.5),
		Slowest:    path(9, 191),
	}
	rep := &render.Report{
		Trace:    render.Trace{File: name + ".trace", Duration: ms(2400), Goroutines: 99, GOMAXPROCS: 2, ProcBusyPct: 9.5, CPUSamples: 20, Tasks: 64, StartWall: "2026-01-02T03:04:05.000Z"},
		Requests: g.Requests, Terms: g.Terms, CPUTerms: g.CPUTerms, CPU: g.CPU, Coverage: g.Coverage,
		Groups:  []render.Group{g},
		Outside: map[string]render.Duration{"network": ms(1200), "select": ms(800), name: ms(1)},
		Findings: []render.Finding{{Kind: "cut-by-window", Group: name, Text: "3 requests cut by the trace window were excluded: " + name},
			{Kind: "no-requests", Text: "refused " + name, Refuse: true}},
	}
	res := &budget.Result{Groups: []*budget.Group{{Name: name, Count: len(lat), Latencies: lat}}}
	return rep, res
}
