package whatif_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/internal/whatif"
)

// The traces: kept recordings of real programs (internal/fixture's demo
// scenarios, queueing's pool service, the corpus's services).
const (
	queueingPool = "../queueing/testdata/pool.trace"
	chiPool      = "../../testdata/corpus/chi-pool.trace"
	sqlPool      = "../../testdata/corpus/sql-pool.trace"
	ginMutex     = "../../testdata/corpus/gin-mutex.trace"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		model bool
		err   string // a part of the error; "" for none
	}{
		{"remove=queryDB", false, ""},
		{"scale=queryDB:0.5", false, ""},
		{"overlap=callUpstream,queryDB", false, ""},
		{"pool=4", true, ""},
		{"pool=pooled:4", true, ""},
		{"cores=2", true, ""},
		{"clients=8", true, ""},
		{"rate=100", true, ""},
		{"scale=queryDB", false, `prediction "scale=queryDB"`},
		{"pool=pooled:0", false, `what-if "pool=pooled:0"`},
		{"cores=", false, `what-if "cores=": want cores=N`},
		{"shrink=queryDB", false, `what-if "shrink=queryDB": unknown operation "shrink"`},
	} {
		s, err := whatif.ParseSpec(tc.spec)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseSpec(%q) = %v, want one line with %q", tc.spec, err, tc.err)
			}
		case err != nil:
			t.Errorf("ParseSpec(%q): %v", tc.spec, err)
		case s.Model() != tc.model || s.Text != tc.spec || (s.Timeline == nil) != tc.model:
			t.Errorf("ParseSpec(%q) = %+v, want model %v", tc.spec, s, tc.model)
		}
	}
}

// evaluate analyses path with specs simulated and evaluates them.
func evaluate(t *testing.T, path string, app []string, in whatif.Inputs, texts ...string) (*budget.Result, *whatif.Evaluation, error) {
	t.Helper()
	specs := parse(t, texts...)
	opts := budget.DefaultOptions
	opts.FixPotential = false
	opts.Rules.App = app
	opts.Predictions = whatif.Predictions(specs)
	res, err := analysis.File(context.Background(), path, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := whatif.Evaluate(res, "", in, specs)
	return res, ev, err
}

func parse(t *testing.T, texts ...string) []whatif.Spec {
	t.Helper()
	var specs []whatif.Spec
	for _, s := range texts {
		sp, err := whatif.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	return specs
}

// must fails t on an error and logs each outcome.
func must(t *testing.T) func(*budget.Result, *whatif.Evaluation, error) (*budget.Result, *whatif.Evaluation) {
	return func(res *budget.Result, ev *whatif.Evaluation, err error) (*budget.Result, *whatif.Evaluation) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ev.Outcomes {
			t.Logf("%-28s %-20s %.2f ms [%.2f, %.2f] | %s", o.Spec, o.Method, ms(o.Mean), ms(o.Low), ms(o.High), o.Why)
		}
		return res, ev
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// TestSerialIsTimeline: a service without a queue (the demo's serial
// scenario, CPU queue well under 1 % of the mean) is predicted by the
// timeline simulation alone, with the closed model's mean and the batch
// means interval of the exact per-request series; a model spec still goes
// to the queueing model.
func TestSerialIsTimeline(t *testing.T) {
	res, ev := must(t)(evaluate(t, fixture.Scenario(t, "serial").Path, nil, whatif.Inputs{},
		"overlap=callUpstream,queryDB", "remove=lockedSection", "scale=queryDB:2", "cores=1"))
	g := res.Groups[0]
	tp := g.Closed(res, budget.Capacity{})
	for i, o := range ev.Outcomes[:3] {
		if o.Method != whatif.Timeline || !strings.HasPrefix(o.Why, "no queue in play") {
			t.Errorf("%s: %s (%s), want the timeline simulation, no queue in play", o.Spec, o.Method, o.Why)
		}
		if c := g.Cap(res, tp, g.Predictions[i]); o.Mean != c.Mean || o.P99 != c.P99 {
			t.Errorf("%s: mean %v p99 %v, want the capped simulation's %v, %v", o.Spec, o.Mean, o.P99, c.Mean, c.P99)
		}
		xs := make([]float64, len(g.Predictions[i].Latencies))
		for j, l := range g.Predictions[i].Latencies {
			xs[j] = float64(l)
		}
		m := stats.BatchMeans(xs)
		if !o.Interval || o.SE != m.SE || o.DF != m.DF() {
			t.Errorf("%s: interval %v SE %g DF %g, want batch means' SE %g DF %g", o.Spec, o.Interval, o.SE, o.DF, m.SE, m.DF())
		}
		if h := m.HalfWidth(); math.Abs(float64(o.High-o.Mean)-h) > 1 || math.Abs(float64(o.Mean-o.Low)-h) > 1 {
			t.Errorf("%s: interval [%v, %v] around %v, want ± %.0f ns", o.Spec, o.Low, o.High, o.Mean, h)
		}
	}
	if o := ev.Outcomes[3]; o.Method != whatif.Queueing || !strings.Contains(o.Why, "queue at CPU") || o.Mean <= time.Duration(g.Latency.Mean) {
		t.Errorf("cores=1: %s %v (%s), want the queueing model, a CPU queue above the measured mean", o.Method, o.Mean, o.Why)
	}
}

// TestPoolQueue: the demo's pool scenario (4 clients, a 2-slot channel
// pool around a 50 ms query) queues half its latency at the pool. With
// the pool sized the queueing model predicts; the closed network's bound
// N·hold/slots says where: halving the query halves the queue too, which
// the timeline simulation (recorded waits kept) cannot see.
func TestPoolQueue(t *testing.T) {
	path := fixture.Scenario(t, "pool").Path
	res, ev := must(t)(evaluate(t, path, nil, whatif.Inputs{Pools: []queueing.PoolSpec{{Name: "pooled", Size: 2}}},
		"scale=queryDB:0.5", "pool=pooled:4"))
	g := res.Groups[0]
	hold := ev.Model.Resources[1].DemandMs
	for _, tc := range []struct {
		o    whatif.Outcome
		want float64 // ms
	}{
		{ev.Outcomes[0], 4 * hold / 2 / 2},                                  // 4 clients, half the hold, 2 slots: the pool still binds
		{ev.Outcomes[1], g.Latency.Mean/1e6 - ev.Model.Resources[1].WaitMs}, // 4 slots for 4 clients: no queue
	} {
		o := tc.o
		if o.Method != whatif.Queueing || !strings.Contains(o.Why, "pool pooled") {
			t.Errorf("%s: %s (%s), want the queueing model naming pool pooled", o.Spec, o.Method, o.Why)
		}
		if d := ms(o.Mean)/tc.want - 1; math.Abs(d) > 0.10 {
			t.Errorf("%s: %.2f ms, want %.2f ms within 10 %% (%+.1f %%)", o.Spec, ms(o.Mean), tc.want, 100*d)
		}
		if !o.Interval || o.Low >= o.Mean || o.High <= o.Mean {
			t.Errorf("%s: interval %v [%v, %v], want one around the mean", o.Spec, o.Interval, o.Low, o.High)
		}
	}
	if sim := ev.Outcomes[0].Simulated; ev.Outcomes[0].Mean >= sim {
		t.Errorf("scale=queryDB:0.5: %v, want below the timeline's %v (which keeps the recorded queue)", ev.Outcomes[0].Mean, sim)
	}

	// Unsized, the channel pool is not a queue the model knows: the
	// timeline predicts, and the reason says how to size it.
	_, ev = must(t)(evaluate(t, path, nil, whatif.Inputs{}, "scale=queryDB:0.5"))
	if o := ev.Outcomes[0]; o.Method != whatif.Timeline || !strings.Contains(o.Why, "--pool demotrace.pooled:SIZE") {
		t.Errorf("unsized: %s (%s), want the timeline, naming --pool demotrace.pooled:SIZE", o.Method, o.Why)
	}
}

// TestHoldNamedByAcquirer: a what-if that names a pool's acquiring frame
// (scale=pooled:0.5 on the demo's pool scenario) scales the pool's hold and
// its acquire wait alike on the timeline, and only the hold in the model,
// which recomputes the queue. Compared like with like — the timeline's
// saving less the recorded queue it scaled against the model's demand
// saving — the two agree, so the queueing model answers, with the same
// mean as halving the held query (scale=queryDB:0.5): the same change to
// the model. (Compared whole, queue against demand, they disagreed by the
// recorded queue and the timeline answered with the queue kept as it
// scaled it.)
func TestHoldNamedByAcquirer(t *testing.T) {
	_, ev := must(t)(evaluate(t, fixture.Scenario(t, "pool").Path, nil, whatif.Inputs{Pools: []queueing.PoolSpec{{Name: "pooled", Size: 2}}},
		"scale=pooled:0.5", "scale=queryDB:0.5"))
	a, b := ev.Outcomes[0], ev.Outcomes[1]
	if a.Method != whatif.Queueing || !strings.Contains(a.Why, "pool pooled") {
		t.Fatalf("%s: %s (%s), want the queueing model naming pool pooled", a.Spec, a.Method, a.Why)
	}
	if d := ms(a.Mean)/ms(b.Mean) - 1; math.Abs(d) > 0.01 {
		t.Errorf("%s: %.2f ms, %s: %.2f ms: want the same within 1 %% (%+.2f %%)", a.Spec, ms(a.Mean), b.Spec, ms(b.Mean), 100*d)
	}
}

// TestQueueingPoolService: queueing's pool service (6 clients, 2-slot pool
// held 5 ms, a 25 ms upstream call) barely queues as recorded; removing
// the upstream call sends the clients to the pool, which only the
// queueing model predicts (its bound: 6 · 5.3 / 2 ms).
func TestQueueingPoolService(t *testing.T) {
	_, ev := must(t)(evaluate(t, queueingPool, []string{"github.com/latscope/latscope/queueing_test"},
		whatif.Inputs{Pools: []queueing.PoolSpec{{Name: "withConn", Size: 2}}}, "remove=callUpstream", "clients=12"))
	o := ev.Outcomes[0]
	if o.Method != whatif.Queueing || o.Mean <= o.Simulated {
		t.Fatalf("remove=callUpstream: %s %v (simulated %v), want the queueing model above the simulation", o.Method, o.Mean, o.Simulated)
	}
	if bound := 6 * ev.Model.Resources[1].DemandMs / 2; math.Abs(ms(o.Mean)/bound-1) > 0.10 {
		t.Errorf("remove=callUpstream: %.2f ms, want the pool's bound %.2f ms within 10 %%", ms(o.Mean), bound)
	}
	if o := ev.Outcomes[1]; o.Method != whatif.Queueing || o.Queue <= 0 || !strings.HasPrefix(o.Why, "changes the queueing model's inputs") {
		t.Errorf("clients=12: %s, queue %v (%s), want the queueing model with a longer queue", o.Method, o.Queue, o.Why)
	}
}

// TestSQLPool: database/sql's pool is recognised; unsized, the model
// cannot be built: timeline specs say why, a model spec is refused with
// the spec named.
func TestSQLPool(t *testing.T) {
	_, ev := must(t)(evaluate(t, sqlPool, nil, whatif.Inputs{}, "scale=QueryContext:0.5"))
	if o := ev.Outcomes[0]; o.Method != whatif.Timeline || !strings.Contains(o.Why, "--pool SIZE") || ev.Unbuilt == "" {
		t.Errorf("unsized: %s (%s), want the timeline saying the pool is not sized", o.Method, o.Why)
	}
	_, _, err := evaluate(t, sqlPool, nil, whatif.Inputs{}, "pool=4")
	if err == nil || !strings.Contains(err.Error(), `what-if "pool=4"`) {
		t.Errorf("pool=4 without a model: %v, want an error naming the spec", err)
	}
	res, ev := must(t)(evaluate(t, sqlPool, nil, whatif.Inputs{Pools: []queueing.PoolSpec{{Size: 2}}}, "scale=QueryContext:0.5", "pool=4"))
	// The queue the model starts from is the service's own: database/sql's
	// DB.Stats wait, per request, in the trace's truth file.
	var truth struct {
		Service struct {
			WaitCount float64 `json:"sql_wait_count"`
			WaitMS    float64 `json:"sql_wait_ms"`
		} `json:"service"`
	}
	b, err := os.ReadFile(strings.TrimSuffix(sqlPool, ".trace") + ".truth.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	own := truth.Service.WaitMS / truth.Service.WaitCount
	if got := ev.Model.Resources[1].WaitMs; math.Abs(got/own-1) > 0.10 {
		t.Errorf("pool's measured wait %.2f ms per request, database/sql's own %.2f ms: want within 10 %%", got, own)
	}
	for _, o := range ev.Outcomes {
		if o.Method != whatif.Queueing || !strings.Contains(o.Why, "pool connection pool") || ms(o.Mean) >= res.Groups[0].Latency.Mean/1e6 {
			t.Errorf("%s: %s %v (%s), want the queueing model below the measured mean", o.Spec, o.Method, o.Mean, o.Why)
		}
	}
}

// TestLock: gin-mutex's section under a sync.Mutex, unsized, is named
// as a queue the model does not see; as a pool of one it is modelled.
func TestLock(t *testing.T) {
	_, ev := must(t)(evaluate(t, ginMutex, nil, whatif.Inputs{}, "scale=fetchOrder:0.5"))
	if o := ev.Outcomes[0]; o.Method != whatif.Timeline || !strings.Contains(o.Why, "--pool main.applyOrder:SIZE") {
		t.Errorf("unsized: %s (%s), want the timeline naming --pool main.applyOrder:SIZE", o.Method, o.Why)
	}
	_, ev = must(t)(evaluate(t, ginMutex, nil, whatif.Inputs{Pools: []queueing.PoolSpec{{Name: "applyOrder", Size: 1}}}, "scale=fetchOrder:0.5", "clients=2"))
	for _, o := range ev.Outcomes {
		if o.Method != whatif.Queueing || !strings.Contains(o.Why, "pool applyOrder") {
			t.Errorf("%s: %s (%s), want the queueing model naming pool applyOrder", o.Spec, o.Method, o.Why)
		}
	}
	if o := ev.Outcomes[0]; o.Mean <= o.Simulated {
		t.Errorf("scale=fetchOrder:0.5: %v, want above the simulation's %v (shorter fetches, more contention)", o.Mean, o.Simulated)
	}
}

// TestPoolOutOfSight: a pool whose held time is not beneath its acquiring
// frame (chi-pool acquires in a helper; the contention scenario's lock
// guards CPU) is not predicted by the model: the timeline keeps its
// recorded waits and says so, and resizing it is refused.
func TestPoolOutOfSight(t *testing.T) {
	_, ev := must(t)(evaluate(t, fixture.Scenario(t, "contention").Path, nil,
		whatif.Inputs{Pools: []queueing.PoolSpec{{Name: "lockedSection", Size: 1}}}, "scale=lockedSection:0.5"))
	if o := ev.Outcomes[0]; o.Method != whatif.Timeline || !strings.Contains(o.Why, "not in the queueing model") {
		t.Errorf("contention: %s (%s), want the timeline, the lock not in the model", o.Method, o.Why)
	}
	_, _, err := evaluate(t, chiPool, nil, whatif.Inputs{Pools: []queueing.PoolSpec{{Name: "get", Size: 2}}}, "pool=get:4")
	if err == nil || !strings.Contains(err.Error(), `what-if "pool=get:4"`) || !strings.Contains(err.Error(), "not in the queueing model") {
		t.Errorf("chi-pool pool=get:4: %v, want a refusal naming the spec", err)
	}
}

// TestRefusals: model specs the model cannot take, and a timeline spec the
// analysis did not simulate, are errors naming the spec.
func TestRefusals(t *testing.T) {
	path := fixture.Scenario(t, "serial").Path
	for _, spec := range []string{"rate=100", "clients=0", "pool=nosuch:2"} {
		if _, _, err := evaluate(t, path, nil, whatif.Inputs{}, spec); err == nil || !strings.Contains(err.Error(), spec) {
			t.Errorf("%s: %v, want an error naming it", spec, err)
		}
	}
	res, _, err := evaluate(t, path, nil, whatif.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whatif.Evaluate(res, "", whatif.Inputs{}, parse(t, "remove=queryDB")); err == nil || !strings.Contains(err.Error(), "remove=queryDB") {
		t.Errorf("unsimulated spec: %v, want an error naming it", err)
	}
	if _, err := whatif.Evaluate(res, "no such type", whatif.Inputs{}, nil); err == nil {
		t.Error("an unknown request type: no error")
	}
}

// TestTooFewRequests: under stats.MinSeries requests there is no interval.
func TestTooFewRequests(t *testing.T) {
	res, _, err := evaluate(t, fixture.Scenario(t, "serial").Path, nil, whatif.Inputs{}, "scale=queryDB:2")
	if err != nil {
		t.Fatal(err)
	}
	p := &res.Groups[0].Predictions[0]
	p.Latencies = p.Latencies[:stats.MinSeries-1]
	ev, err := whatif.Evaluate(res, "", whatif.Inputs{}, parse(t, "scale=queryDB:2"))
	if err != nil {
		t.Fatal(err)
	}
	if o := ev.Outcomes[0]; o.Interval || o.Low != 0 || o.High != 0 {
		t.Errorf("%d requests: interval %v [%v, %v], want none", stats.MinSeries-1, o.Interval, o.Low, o.High)
	}
}

// TestForkJoin: in the demo's waitgroup scenario callUpstream and queryDB
// run in parallel. Removing callUpstream saves only what queryDB does not
// cover (the timeline knows, the model would take off all of callUpstream
// and put its CPU queue at a rate the service never reaches): the timeline
// predicts, and says why.
func TestForkJoin(t *testing.T) {
	_, ev := must(t)(evaluate(t, fixture.Scenario(t, "waitgroup").Path, nil, whatif.Inputs{}, "remove=overlapWaitGroup>callUpstream"))
	if o := ev.Outcomes[0]; o.Method != whatif.Timeline || !strings.Contains(o.Why, "fork/join") {
		t.Errorf("%s: %s (%s), want the timeline, naming the fork/join structure", o.Spec, o.Method, o.Why)
	}
}

// TestIntervalWidensWithQueue: a queueing outcome's interval carries the
// error of the measured demands into the queues (the sensitivity term), so
// it is wider than the base series' own relative error would make it where
// the change builds a queue: clients=12 on queueing's pool service and a
// pool resized on the demo's pool scenario.
func TestIntervalWidensWithQueue(t *testing.T) {
	for _, tc := range []struct {
		path, spec string
		app        []string
		pool       queueing.PoolSpec
	}{
		{queueingPool, "clients=12", []string{"github.com/latscope/latscope/queueing_test"}, queueing.PoolSpec{Name: "withConn", Size: 2}},
		{fixture.Scenario(t, "pool").Path, "pool=pooled:4", nil, queueing.PoolSpec{Name: "pooled", Size: 2}},
	} {
		res, ev := must(t)(evaluate(t, tc.path, tc.app, whatif.Inputs{Pools: []queueing.PoolSpec{tc.pool}}, tc.spec))
		g, o := res.Groups[0], ev.Outcomes[0]
		xs := make([]float64, len(g.Latencies))
		for i, l := range g.Latencies {
			xs[i] = float64(l)
		}
		own := stats.BatchMeans(xs).SE / g.Latency.Mean * float64(o.Mean)
		if o.Method != whatif.Queueing || !o.Interval || o.SE <= own*1.01 {
			t.Errorf("%s: %s, SE %.0f ns, want the queueing model with an SE above the series' own %.0f ns", tc.spec, o.Method, o.SE, own)
		}
	}
}

// TestCPUSpec: a spec on a frame's CPU (a CPU term, docs/method.md §3
// "CPU by frame") reaches the queueing model as CPU station demand. At
// CPU saturation (the corpus's gin-cpu-sat: 8 clients on GOMAXPROCS=2,
// 40 % of the mean runnable) halving pricing.Compute cuts the CPU's
// demand by half its CPU per request with the running time that went
// along with it, the engine predicts by the model and says why, the
// anchor is the timeline's mean with the preemptions' runnable time it
// scaled given back, plus the model's change in the CPU queue; on the
// quiet gin-cpu (no CPU queue) the timeline answers, and a remove= of the
// frame's CPU reaches the model too.
func TestCPUSpec(t *testing.T) {
	const ginCPUSat, ginCPU = "../../testdata/corpus/gin-cpu-sat.trace", "../../testdata/corpus/gin-cpu.trace"
	res, ev := must(t)(evaluate(t, ginCPUSat, nil, whatif.Inputs{Clients: 8}, "scale=pricing.Compute:0.5", "remove=pricing.Compute"))
	g := res.Groups[0]
	n := float64(g.Count)
	var demand, queue float64 // ms per request, the frame's whole CPU and its preemptions' runnable time
	for _, ts := range g.CPUTerms {
		if res.Terms[ts.Term].Matches("pricing.Compute") {
			demand += queueing.CPUDemand(ts) / n / 1e6
			queue += (float64(ts.Along) - queueing.AlongRunning(ts)) / n / 1e6
		}
	}
	for i, f := range []float64{0.5, 0} {
		o := ev.Outcomes[i]
		if o.Method != whatif.Queueing || !strings.HasPrefix(o.Why, "queue at CPU") || o.After == nil {
			t.Fatalf("%s: %s (%s), want the queueing model on the CPU queue", o.Spec, o.Method, o.Why)
		}
		cut := o.Before.Resources[0].DemandMs - o.After.Resources[0].DemandMs
		if want := demand * (1 - f); math.Abs(cut-want) > 0.002 {
			t.Errorf("%s: CPU demand cut %.3f ms, want the frame's %.3f ms", o.Spec, cut, want)
		}
		anchor := g.Predictions[i].Mean/1e6 + queue*(1-f)
		if got := ms(o.Mean); math.Abs(got-(anchor+ms(o.Queue))) > 0.001 || o.Queue >= 0 {
			t.Errorf("%s: mean %.3f ms, want the anchor %.3f ms plus the CPU queue's change %.3f ms (< 0)", o.Spec, got, anchor, ms(o.Queue))
		}
	}
	_, ev = must(t)(evaluate(t, ginCPU, nil, whatif.Inputs{}, "scale=pricing.Compute:0.5"))
	if o := ev.Outcomes[0]; o.Method != whatif.Timeline || !strings.HasPrefix(o.Why, "no queue in play") {
		t.Errorf("gin-cpu %s: %s (%s), want the timeline, no queue in play", o.Spec, o.Method, o.Why)
	}
}
