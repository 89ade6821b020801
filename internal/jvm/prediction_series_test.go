package jvm

import (
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/whatif"
)

// TestPredictionSeries checks that request mode keeps each request's
// simulated latency (budget.PredictionResult.Latencies) beside its measured
// one, so that the prediction engine gives a JVM prediction a 95 % interval
// as it does a Go one (issue #36 §3). On the kept recording of Svc (a
// synchronized cache around SHA-256, a pool of 6 connections, 8 clients):
// the series has one entry per request, its mean is the prediction's mean,
// halving the query never lengthens a request, and whatif.Evaluate gives an
// interval around the mean by the timeline simulation (no queue sized) and
// by the queueing model (the lock sized as a pool of one).
func TestPredictionSeries(t *testing.T) {
	t.Parallel()
	const spec = "scale=ConnPool$Conn.query:0.5"
	s, err := whatif.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	path, err := jfrtest.Kept("svc", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions
	o.Predictions = whatif.Predictions([]whatif.Spec{s})
	a := readAll(t, path, rec, o)
	res := a.Finalize()
	for _, g := range res.Groups {
		if len(g.Predictions) != 1 {
			t.Fatalf("%s: %d predictions, want 1", g.Name, len(g.Predictions))
		}
		p := g.Predictions[0]
		if len(p.Latencies) != g.Count || len(g.Latencies) != g.Count {
			t.Fatalf("%s: %d simulated and %d measured latencies for %d requests", g.Name, len(p.Latencies), len(g.Latencies), g.Count)
		}
		if m := budget.StatsOf(p.Latencies).Mean; m != p.Mean {
			t.Errorf("%s: the series' mean %.0f ns, the prediction's %.0f ns", g.Name, m, p.Mean)
		}
		longer := 0
		for i, x := range p.Latencies {
			if x > g.Latencies[i] {
				longer++
			}
		}
		if longer > 0 {
			t.Errorf("%s: %d of %d requests longer with the query halved: the series is not in the order of Group.Latencies", g.Name, longer, g.Count)
		}
	}
	for _, tc := range []struct {
		name   string
		in     whatif.Inputs
		method whatif.Method
	}{
		// 64 cores: no CPU queue (the JVM's CPU outside requests, its
		// in-process clients, puts one on the recording's 2)
		{"no queue in play", whatif.Inputs{Cores: 64}, whatif.Timeline},
		{"lock as a pool of one", whatif.Inputs{Pools: []queueing.PoolSpec{{Name: "Svc.updateCache", Size: 1}}}, whatif.Queueing},
	} {
		ev, err := whatif.Evaluate(res, "", tc.in, []whatif.Spec{s})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out := ev.Outcomes[0]
		g := res.Groups[0]
		t.Logf("%s: %s %.2f ms (95 %% %.2f–%.2f, ±%.1f %%) from %.2f ms measured, by the %s: %s", tc.name, spec,
			msOf(out.Mean), msOf(out.Low), msOf(out.High), 50*float64(out.High-out.Low)/float64(out.Mean), g.Latency.Mean/1e6, out.Method, out.Why)
		if out.Method != tc.method {
			t.Errorf("%s: method %q, want %q", tc.name, out.Method, tc.method)
		}
		if !out.Interval || out.Low >= out.Mean || out.High <= out.Mean || out.DF < 1 {
			t.Errorf("%s: interval %v %v–%v (df %.0f) around %v: want one around the mean", tc.name, out.Interval, out.Low, out.High, out.DF, out.Mean)
		}
	}
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return d.Seconds() * 1e3 }
