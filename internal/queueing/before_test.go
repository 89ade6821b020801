package queueing_test

import (
	"math"
	"slices"
	"testing"

	"github.com/latscope/latscope/internal/budget"
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
