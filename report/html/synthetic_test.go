package htmlreport_test

import (
	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/render"
)

// synthetic returns a small hand-made report and result: deterministic,
// with every section populated, and name in every place user text goes.
func synthetic(name string) (*render.Report, *budget.Result) {
	lat := []int64{}
	for i := range 60 {
		lat = append(lat, int64(150e6+float64(i%7)*1.5e6+float64(i/20)*2e6))
	}
	lat = append(lat, 191e6)
	path := func(task uint64, l float64) *render.PathJSON {
		return &render.PathJSON{Task: task, LatencyMs: l, Goroutines: 2, Segments: []render.SegmentJSON{
			{StartMs: 0, DurMs: 1, Goroutine: 7, Kind: "running"},
			{StartMs: 1, DurMs: 90, Goroutine: 9, Kind: "network", Term: name + ".callUpstream [net/http.(*persistConn).roundTrip, select]", Borrowed: true},
			{StartMs: 91, DurMs: 10, Goroutine: 9, Kind: "select", Term: name + ".callUpstream [net/http.(*persistConn).roundTrip, select]", Borrowed: true},
			{StartMs: 101, DurMs: 0.2, Goroutine: 7, Kind: "runnable"},
			{StartMs: 101.2, DurMs: l - 104.2, Goroutine: 7, Kind: "network", Term: name + ".queryDB [net.(*netFD).Read, network]"},
			{StartMs: l - 3, DurMs: 2, Goroutine: 7, Kind: "sync", Term: name + ".locked [sync.(*Mutex).Lock, sync]", Contention: true},
			{StartMs: l - 1, DurMs: 0.6, Goroutine: 7, Kind: "running", Unknown: true},
			{StartMs: l - 0.4, DurMs: 0.4, Goroutine: 7, Kind: "running"},
		}}
	}
	g := render.GroupJSON{
		Name:     name,
		Requests: render.RequestsJSON{Count: len(lat), Excluded: 3, ExcludedBefore: 1, ExcludedAfter: 2, Forked: 0, MeanMs: 155.6, MinMs: 150, P50Ms: 154.5, P90Ms: 160, P99Ms: 191, MaxMs: 191, RPS: 25.2},
		Terms: []render.TermJSON{
			{Frame: "example.com/svc/" + name + ".callUpstream", Mechanism: "net/http.(*persistConn).roundTrip", Kind: "select", WaitMs: 100, SharePct: 64.3, CriticalMs: 100, CriticalPct: 64.3, FixPotentialMs: 99, Requests: 61, CausesMs: map[string]float64{"network": 90, "select": 10}},
			{Frame: "example.com/svc/" + name + ".queryDB", Mechanism: "net.(*netFD).Read", Kind: "network", WaitMs: 50, SharePct: 32.1, CriticalMs: 50, CriticalPct: 32.1, FixPotentialMs: 50, Requests: 61},
			{Frame: "example.com/svc/" + name + ".locked", Mechanism: "sync.(*Mutex).Lock", Kind: "sync", WaitMs: 2, SharePct: 1.3, CriticalMs: 2, CriticalPct: 1.3, FixPotentialMs: 1.5, ContentionMs: 2, Requests: 30},
			{Frame: "", Mechanism: "syscall.read", Kind: "syscall", WaitMs: 0.1, SharePct: 0.06, CriticalMs: 0.1, CriticalPct: 0.06, Requests: 61},
		},
		CPU:      render.CPUJSON{RunningMs: 3, RunnableMs: 0.4, CriticalRunningMs: 2.9, CriticalRunnableMs: 0.4},
		Coverage: render.CoverageJSON{WaitSumPct: 97.7, GoroutineSumPct: 100, CriticalPct: 100, UnknownMs: 0.1},
		Regions: []render.RegionJSON{{Name: "upstream", WallMs: 100, WallPct: 64, CPUSamples: 0}, {Name: "db", WallMs: 50, WallPct: 32},
			{Name: name, WallMs: 3, WallPct: 2, CPUSamples: 12, CPUPct: 60}, {Name: "", WallMs: 0.1, WallPct: 0.1, CPUSamples: 8, CPUPct: 40}},
		Predictions: []render.PredictionJSON{{Spec: "remove=" + name, MeanMs: 55, P99Ms: 70, DeltaPct: -64.7, RPS: 70, Limit: "clients (3.9 / mean)"},
			{Spec: "scale=queryDB:2", MeanMs: 205, P99Ms: 240, DeltaPct: 31.7, RPS: 19, Limit: "clients (3.9 / mean)"}},
		Throughput: render.ThroughputJSON{Clients: 3.9, ClientsEstimated: true, Cores: 2, CPUPerRequestMs: 3, CPUCapRPS: 666, MeasuredRPS: 25.2, PredictedRPS: 25.1},
		Median:     path(13, 154.5),
		Slowest:    path(9, 191),
	}
	rep := &render.Report{
		Trace:    render.TraceJSON{File: name + ".trace", DurationMs: 2400, Goroutines: 99, GOMAXPROCS: 2, ProcBusyPct: 9.5, CPUSamples: 20, Tasks: 64, StartWall: "2026-01-02T03:04:05.000Z"},
		Requests: g.Requests, Terms: g.Terms, CPU: g.CPU, Coverage: g.Coverage,
		Groups:  []render.GroupJSON{g},
		Outside: map[string]float64{"network": 1200, "select": 800, name: 1},
		Findings: []render.FindingJSON{{Kind: "cut-by-window", Group: name, Text: "3 requests cut by the trace window were excluded: " + name},
			{Kind: "no-requests", Text: "refused " + name, Refuse: true}},
	}
	res := &budget.Result{Groups: []*budget.Group{{Name: name, Count: len(lat), Latencies: lat}}}
	return rep, res
}
