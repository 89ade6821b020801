package queueing_test

import (
	"context"
	"errors"
	"io"
	"math"
	"runtime"
	"runtime/trace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/kept"
	"github.com/latscope/latscope/internal/queueing"
)

// pool is the test service's connection pool: a buffered-channel semaphore.
var pool = make(chan struct{}, 2)

// withConn holds a connection for a 5 ms query.
func withConn() {
	pool <- struct{}{}
	queryDB()
	<-pool
}

func queryDB()      { time.Sleep(5 * time.Millisecond) }
func callUpstream() { time.Sleep(25 * time.Millisecond) }

// record returns the analysis of testdata/NAME.trace: 6 closed-loop
// clients running request (withConn then callUpstream, unless given) for
// half a second, traced by the real runtime once and kept
// (kept.Trace; LATSCOPE_RETRACE=1 records it again).
func record(t *testing.T, name string, request ...func(ctx context.Context)) *budget.Result {
	t.Helper()
	path := kept.Trace(t, name, func(w io.Writer) error { return run(w, request...) })
	opts := budget.DefaultOptions
	opts.FixPotential = false
	opts.Rules.App = []string{"github.com/latscope/latscope/queueing_test"}
	res, err := analysis.File(context.Background(), path, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// run traces the clients into w.
func run(w io.Writer, request ...func(ctx context.Context)) error {
	if trace.IsEnabled() {
		return errors.New("a runtime trace is already running (go test -trace?)")
	}
	work := func(context.Context) { withConn(); callUpstream() }
	if len(request) > 0 {
		work = request[0]
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for !stop.Load() {
				ctx, task := trace.NewTask(context.Background(), "request")
				work(ctx)
				task.End()
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	time.Sleep(100 * time.Millisecond)
	if err := trace.Start(w); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	trace.Stop()
	return nil
}

func TestPredictFromTrace(t *testing.T) {
	t.Parallel()
	res := record(t, "pool")
	in := queueing.Inputs{Task: "request", Clients: 6, Cores: float64(runtime.GOMAXPROCS(0)),
		Pools: []queueing.PoolSpec{{Name: "withConn", Size: 2}}}
	p, err := queueing.Predict(res, in, []string{"remove=callUpstream", "pool=withConn:4", "clients=12", "cores=1", "scale=queryDB:0.5"})
	if err != nil {
		t.Fatal(err)
	}
	// The configuration: 2 connections held ~5 ms, a ~25 ms delay, 6 clients
	// (the pool about half busy).
	var hold, wake float64
	for _, r := range p.Model.Resources {
		if r.Name == "withConn" {
			hold, wake = r.DemandMs, r.WakeMs
		}
	}
	// The hold is the query's wait plus the scheduling latency of the
	// wake-ups while held, which grows with the host's other load.
	if q := hold - wake; q < 5 || q > 6.5 {
		t.Errorf("pool hold %.3f ms less %.3f ms of wake-ups, want 5 ms of query", hold, wake)
	}
	t.Logf("model as recorded: %+v", p.Validation)
	if v := p.Validation.MeanResidual; math.Abs(v) > 10 {
		t.Errorf("model of the trace as recorded is %+.1f %% off", v)
	}
	want := []struct {
		bottleneck string
		faster     bool // mean falls
	}{
		{"withConn", true},  // remove the upstream: the pool saturates (2 / 5 ms = 400 rps)
		{"withConn", true},  // a larger pool
		{"withConn", false}, // more clients queue
		{"withConn", false}, // one core: CPU is still light
		{"withConn", true},  // a faster query
	}
	for i, o := range p.Outcomes {
		if o.After.Bottleneck != want[i].bottleneck {
			t.Errorf("%s: bottleneck %q, want %q", o.Spec, o.After.Bottleneck, want[i].bottleneck)
		}
		if (o.After.MeanMs < o.Before.MeanMs) != want[i].faster && o.After.MeanMs != o.Before.MeanMs {
			t.Errorf("%s: mean %.3f → %.3f", o.Spec, o.Before.MeanMs, o.After.MeanMs)
		}
		if o.P99Note == "" {
			t.Errorf("%s: no word on the p99", o.Spec)
		}
	}
	// Removing the upstream leaves 6 clients on 2 connections held 5 ms:
	// the pool's capacity bounds the throughput.
	if x := p.Outcomes[0].After.RPS; x > 1000*2/hold*1.001 {
		t.Errorf("remove=callUpstream: %.1f rps beyond the pool's capacity %.1f", x, 1000*2/hold)
	}

	bad := []struct{ spec, msg string }{
		{"pool=nosuch:3", "no modelled pool"},
		{"cores=0", "cores=N"},
		{"clients=x", "clients=N"},
		{"remove=nosuchframe", "matches"},
		{"frobnicate=1", "unknown operation"},
	}
	for _, b := range bad {
		if _, err := queueing.Predict(res, in, []string{b.spec}); err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%s: err %v, want one saying %q", b.spec, err, b.msg)
		}
	}
	if _, err := queueing.Predict(res, queueing.Inputs{Task: "nosuch"}, nil); err == nil {
		t.Error("an unknown request type accepted")
	}
	if _, err := queueing.Predict(res, in, []string{"rate=100"}); err == nil || !strings.Contains(err.Error(), "the model is closed") {
		t.Errorf("rate= on a closed model: err %v", err)
	}

	// The same trace as an open workload: arrivals at the recorded
	// throughput, then at rates the pool (2 connections, ~5 ms held) can
	// and cannot serve.
	open := in
	open.Clients, open.Open = 0, true
	op, err := queueing.Predict(res, open, []string{"rate=100", "rate=1000", "pool=withConn:8"})
	if err != nil {
		t.Fatal(err)
	}
	if op.Model.Rate != op.Model.MeasuredRPS || op.Validation.RPSResidual != 0 {
		t.Errorf("open model: rate %v, measured %v rps, residual %v", op.Model.Rate, op.Model.MeasuredRPS, op.Validation.RPSResidual)
	}
	// The trace's 6 clients are a closed loop: an open model of it queues
	// more (no bound on the population), so its residual is only logged.
	t.Logf("open model as recorded: %+v", op.Validation)
	if o := op.Outcomes[0]; o.After.Unstable != "" || o.After.RPS != 100 {
		t.Errorf("rate=100: %+v", o.After)
	}
	if o := op.Outcomes[1]; !strings.Contains(o.After.Unstable, "withConn cannot keep up") {
		t.Errorf("rate=1000 on 2 connections held %.3g ms: unstable %q", hold, o.After.Unstable)
	}
	if o := op.Outcomes[2]; o.After.Unstable != "" || o.After.MeanMs >= o.Before.MeanMs {
		t.Errorf("pool=withConn:8 at the recorded rate: mean %.3f → %.3f (%s)", o.Before.MeanMs, o.After.MeanMs, o.After.Unstable)
	}
	if _, err := queueing.Predict(res, open, []string{"clients=3"}); err == nil || !strings.Contains(err.Error(), "the model is open") {
		t.Errorf("clients= on an open model: err %v", err)
	}
}

func TestParsePool(t *testing.T) {
	tests := []struct {
		in   string
		want queueing.PoolSpec
		ok   bool
	}{
		{"withConn:10", queueing.PoolSpec{Name: "withConn", Size: 10}, true},
		{"10", queueing.PoolSpec{Size: 10}, true},
		{"a.b>c:1", queueing.PoolSpec{Name: "a.b>c", Size: 1}, true},
		{"x:0", queueing.PoolSpec{}, false},
		{"x:-1", queueing.PoolSpec{}, false},
		{"x:y", queueing.PoolSpec{}, false},
		{"", queueing.PoolSpec{}, false},
	}
	for _, tt := range tests {
		got, err := queueing.ParsePool(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePool(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

// sem is the semaphore of TestPredictSemaphore: 3 permits.
var sem = semaphore.NewWeighted(3)

// withPermit holds a permit for a 5 ms query.
func withPermit(ctx context.Context) {
	if sem.Acquire(ctx, 1) == nil {
		queryDB()
		sem.Release(1)
	}
}

// TestPredictSemaphore records requests that take a permit of a
// golang.org/x/sync semaphore (3 permits, held 5 ms, then 5 ms more): its
// acquire blocks in the semaphore's select, machinery beneath the frame
// that acquires it, so the pool is named by that frame.
func TestPredictSemaphore(t *testing.T) {
	t.Parallel()
	res := record(t, "semaphore", func(ctx context.Context) {
		withPermit(ctx)
		time.Sleep(5 * time.Millisecond)
	})
	in := queueing.Inputs{Task: "request", Clients: 6, Pools: []queueing.PoolSpec{{Name: "withPermit", Size: 3}}}
	p, err := queueing.Predict(res, in, []string{"pool=withPermit:6"})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Model.Resources[1]
	if r.Kind != queueing.Pool || r.Servers != 3 || r.DemandMs-r.WakeMs < 5 || r.DemandMs-r.WakeMs > 6.5 {
		t.Errorf("want a pool of 3 held 5 ms (plus wake-ups): %+v", r)
	}
	if o := p.Outcomes[0]; o.After.Resources[1].Servers != 6 || o.After.MeanMs > o.Before.MeanMs {
		t.Errorf("pool=withPermit:6: mean %.3f → %.3f, %+v", o.Before.MeanMs, o.After.MeanMs, o.After.Resources[1])
	}
	t.Logf("semaphore: %+v; validation %+v", r, p.Validation)
}
