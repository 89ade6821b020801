package queueing_test

import (
	"math"
	"slices"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/queueing"
)

// TestClientsCountTheWaitBefore: the clients estimated by Little's law
// count the requests waiting for a CPU before they began
// (budget.RunnableBefore), as the think time leaves that wait out: 100
// requests of 10 ms in 1 s, each after 5 ms runnable before it, are 1.5
// requests in progress on average, 2 clients, and a think time of
// 2/100 s − 10 − 5 = 5 ms. Counting the 10 ms alone gave 1 client and a
// think time of 0, the model's throughput 100 → 66.7 rps.
func TestClientsCountTheWaitBefore(t *testing.T) {
	const n, lat, before = 100, 10e6, 5e6
	g := &budget.Group{Name: "GET /q", Count: n, Latency: budget.Stats{Mean: lat},
		Latencies:      slices.Repeat([]int64{lat}, n),
		Running:        budget.TimeStat{Wait: n * 2e6, Critical: n * 2e6},
		RunnableBefore: &budget.RunnableBefore{Requests: n, Mean: before}}
	res := &budget.Result{Info: budget.TraceInfo{Start: 0, End: 1e9, Procs: 1, ProcBusy: n * 2e6}, Groups: []*budget.Group{g}}
	m, err := queueing.Build(res, queueing.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Clients != 2 || !m.ClientsEstimated || math.Abs(m.ThinkMs-5) > 1e-9 || math.Abs(m.BeforeMs-5) > 1e-9 {
		t.Errorf("clients %d (estimated %v), think %.6g ms, before %.6g ms; want 2 (estimated), 5, 5", m.Clients, m.ClientsEstimated, m.ThinkMs, m.BeforeMs)
	}
	// With the server's workers modelled the wait before is not taken
	// apart (the model has no CPU queue before the workers' station): it
	// stays in the think time, and in the clients.
	m, err = queueing.Build(res, queueing.Inputs{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if m.Clients != 2 || m.BeforeMs != 0 || math.Abs(m.ThinkMs-10) > 1e-9 {
		t.Errorf("with workers: clients %d, before %.6g ms, think %.6g ms; want 2, 0, 10", m.Clients, m.BeforeMs, m.ThinkMs)
	}
}

// TestClientsInProcess: with the clients in the service's process their
// think time is the CPU's queue outside the request where the model's own
// queue explains at least a quarter of the measured wait for a CPU (in the
// requests and outside them): taken out of the think time, and
// recomputed. At 1 % busy the model explains almost none of it (scheduling
// latency, or no CPU's at all): it stays in the think time. Without
// ClientsInProcess the think time is kept, its runnable part measured.
func TestClientsInProcess(t *testing.T) {
	build := func(running, runnable, outside float64, inProcess bool) *queueing.Model {
		t.Helper()
		const n, lat = 100, 40e6
		g := &budget.Group{Name: "GET /q", Count: n, Latency: budget.Stats{Mean: lat},
			Latencies: slices.Repeat([]int64{lat}, n),
			Running:   budget.TimeStat{Wait: int64(n * running), Critical: int64(n * running)},
			Runnable:  budget.TimeStat{Wait: int64(n * runnable), Critical: int64(n * runnable)}}
		res := &budget.Result{Info: budget.TraceInfo{Start: 0, End: 1e9, Procs: 2, ProcBusy: int64(n * running)}, Groups: []*budget.Group{g}}
		res.Outside.ByKind[frame.Runnable] = int64(n * outside)
		m, err := queueing.Build(res, queueing.Inputs{Clients: 8, ClientsInProcess: inProcess})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// 8 clients, 100 requests a second: a cycle of 80 ms, 40 of them in
	// the request and 40 of think time; 18 ms of CPU each on 2 cores is
	// 90 % busy
	m := build(18e6, 10e6, 20e6, true)
	if !m.ClientsInProcess || math.Abs(m.ThinkQueueMs-40) > 1e-9 || m.ThinkMs != 0 || math.Abs(m.ThinkRunnableMs-20) > 1e-9 {
		t.Errorf("at 90 %% busy: in process %v, think as the CPU's queue %.6g ms, think %.6g ms, runnable %.6g ms; want true, 40, 0, 20", m.ClientsInProcess, m.ThinkQueueMs, m.ThinkMs, m.ThinkRunnableMs)
	}
	st, err := m.Solve()
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(st.MeanMs-40) > 0.5 || st.BeforeMs < 30 {
		t.Errorf("at 90 %% busy: model %.3f ms as recorded, %.3f ms of the CPU's queue outside the request; want 40 and most of the 40 of think time", st.MeanMs, st.BeforeMs)
	}
	if m := build(18e6, 10e6, 20e6, false); m.ThinkQueueMs != 0 || math.Abs(m.ThinkMs-40) > 1e-9 || math.Abs(m.ThinkRunnableMs-20) > 1e-9 {
		t.Errorf("clients not in the process: think as the CPU's queue %.6g ms, think %.6g ms, runnable %.6g ms; want 0, 40 (kept), 20", m.ThinkQueueMs, m.ThinkMs, m.ThinkRunnableMs)
	}
	if m := build(0.2e6, 0.1e6, 20e6, true); m.ThinkQueueMs != 0 || math.Abs(m.ThinkMs-40) > 1e-9 {
		t.Errorf("at 1 %% busy: think as the CPU's queue %.6g ms, think %.6g ms; want 0, 40 (kept)", m.ThinkQueueMs, m.ThinkMs)
	}
}
