package budget_test

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/frame"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

// ms converts a per-request sum to milliseconds per request.
func ms(sum int64, g *budget.Group) float64 { return float64(sum) / float64(g.Count) / 1e6 }

// term finds the group's term whose frame ends in frameName and whose
// mechanism contains mech ("" for any) and kind matches.
func term(t *testing.T, res *budget.Result, g *budget.Group, frameName, mech string, kind frame.Kind) budget.TermStat {
	t.Helper()
	for _, ts := range g.Terms {
		tm := res.Terms[ts.Term]
		if budget.MatchName(tm.Frame, frameName) && strings.Contains(tm.Mechanism, mech) && tm.Kind == kind {
			return ts
		}
	}
	var names []string
	for _, ts := range g.Terms {
		names = append(names, res.Terms[ts.Term].Name())
	}
	t.Fatalf("no term %s/%s/%v in %q", frameName, mech, kind, names)
	return budget.TermStat{}
}

func only(t *testing.T, res *budget.Result) *budget.Group {
	t.Helper()
	if len(res.Groups) != 1 {
		t.Fatalf("want one request type, got %d", len(res.Groups))
	}
	return res.Groups[0]
}

// invariants hold for every group of every fixture.
func invariants(t *testing.T, res *budget.Result) {
	t.Helper()
	for _, g := range res.Groups {
		if g.PathMismatch != 0 {
			t.Errorf("%s: %d request(s) whose critical path does not sum to their latency", g.Name, g.PathMismatch)
		}
		if g.Unknown != 0 {
			t.Errorf("%s: %.3f ms per request of critical path unexplained", g.Name, ms(g.Unknown, g))
		}
		var crit int64 = g.Running.Critical + g.Runnable.Critical + g.Unknown
		for _, ts := range g.Terms {
			if ts.Wait < 0 || ts.Critical < 0 || ts.Critical > ts.Wait+ts.Wait/1000+1000 && ts.Causes[frame.Running] == 0 {
				t.Errorf("%s: term %s: wait %d critical %d", g.Name, res.Terms[ts.Term].Name(), ts.Wait, ts.Critical)
			}
			crit += ts.Critical
		}
		var lat int64
		for _, l := range g.Latencies {
			lat += l
		}
		if crit != lat {
			t.Errorf("%s: Σ critical %d != Σ latency %d", g.Name, crit, lat)
		}
		if g.Latency.Min > g.Latency.P50 || g.Latency.P50 > g.Latency.P99 || g.Latency.P99 > g.Latency.Max {
			t.Errorf("%s: percentiles out of order: %+v", g.Name, g.Latency)
		}
	}
}

// within checks got against the nominal duration of a sleep-based wait: a
// wait cannot be shorter than the sleep behind it, and on a loaded 2-core
// machine timer and scheduling delays add a few milliseconds, not tens.
func within(t *testing.T, what string, got float64, nominal time.Duration) {
	t.Helper()
	n := float64(nominal) / 1e6
	if got < 0.98*n || got > n*1.25+5 {
		t.Errorf("%s = %.2f ms, want about %.0f ms", what, got, n)
	}
}

func TestSerial(t *testing.T) {
	rec := fixture.Scenario(t, "serial")
	res := fixture.Analyze(t, rec.Path, budget.DefaultOptions)
	invariants(t, res)
	g := only(t, res)
	if g.Name != "request" || g.Count != rec.Summary.Requests || g.Excluded() != 0 {
		t.Fatalf("group %q: %d requests (%d excluded), want %d", g.Name, g.Count, g.Excluded(), rec.Summary.Requests)
	}
	up := term(t, res, g, "demotrace.callUpstream", "net/http", frame.Select)
	db := term(t, res, g, "demotrace.queryDB", "Read", frame.Network)
	within(t, "callUpstream wait", ms(up.Wait, g), rec.Config.Upstream)
	within(t, "queryDB wait", ms(db.Wait, g), rec.Config.DB)
	if up.Requests != g.Count || db.Requests != g.Count {
		t.Errorf("terms seen in %d and %d of %d requests", up.Requests, db.Requests, g.Count)
	}
	// The upstream wait is a select in the request goroutine; following the
	// wakeup edge to net/http's readLoop finds the network beneath it.
	if net := float64(up.Causes[frame.Network]) / float64(up.Critical); net < 0.8 {
		t.Errorf("callUpstream: network is %.0f%% of its critical time, want most of it", 100*net)
	}
	var waits int64
	for _, ts := range g.Terms {
		waits += ts.Wait
	}
	if pct := 100 * ms(waits, g) / (g.Latency.Mean / 1e6); pct < 90 || pct > 102 {
		t.Errorf("serial wait sum / mean = %.1f%%, want 90–102%%", pct)
	}
	if g.Forked != 0 {
		t.Errorf("%d serial requests forked", g.Forked)
	}
}

func TestOverlapped(t *testing.T) {
	for _, sc := range []string{"waitgroup", "errgroup"} {
		t.Run(sc, func(t *testing.T) {
			rec := fixture.Scenario(t, sc)
			res := fixture.Analyze(t, rec.Path, budget.DefaultOptions)
			invariants(t, res)
			g := only(t, res)
			var waits int64
			for _, ts := range g.Terms {
				waits += ts.Wait
			}
			if pct := 100 * ms(waits, g) / (g.Latency.Mean / 1e6); pct < 120 {
				t.Errorf("wait sum / mean = %.1f%%, want well over 100%% when requests fork", pct)
			}
			if g.Forked != g.Count {
				t.Errorf("%d of %d requests forked", g.Forked, g.Count)
			}
			up := term(t, res, g, "demotrace.callUpstream", "net/http", frame.Select)
			db := term(t, res, g, "demotrace.queryDB", "Read", frame.Network)
			within(t, "callUpstream critical", ms(up.Critical, g), rec.Config.Upstream)
			if c := ms(db.Critical, g); c > 2 {
				t.Errorf("queryDB (the shorter branch) has %.2f ms on the critical path, want ~0", c)
			}
		})
	}
}

func TestOverlapPrediction(t *testing.T) {
	serial := fixture.Scenario(t, "serial")
	opts := budget.DefaultOptions
	for _, s := range []string{"overlap=callUpstream,queryDB", "remove=lockedSection", "scale=queryDB:2"} {
		p, err := budget.ParsePrediction(s)
		if err != nil {
			t.Fatal(err)
		}
		opts.Predictions = append(opts.Predictions, p)
	}
	g := only(t, fixture.Analyze(t, serial.Path, opts))
	over := fixture.Analyze(t, fixture.Scenario(t, "waitgroup").Path, budget.DefaultOptions)
	measured := only(t, over).Latency.Mean
	pred := g.Predictions[0].Mean
	t.Logf("overlap predicted %.2f ms from the serial trace, measured %.2f ms overlapped (%+.1f%%)", pred/1e6, measured/1e6, 100*(pred-measured)/measured)
	if e := (pred - measured) / measured; e < -0.05 || e > 0.05 {
		t.Errorf("overlap predicted %.2f ms, measured %.2f ms: error %+.1f%%, want within 5%%", pred/1e6, measured/1e6, 100*e)
	}
	if gain := (g.Latency.Mean - g.Predictions[1].Mean) / g.Latency.Mean; gain < 0 || gain > 0.03 {
		t.Errorf("remove=lockedSection gains %.1f%%, want under 3%%", 100*gain)
	}
	db := term(t, fixture.Analyze(t, serial.Path, budget.DefaultOptions), g, "demotrace.queryDB", "Read", frame.Network)
	want := g.Latency.Mean + float64(db.Critical)/float64(g.Count)
	if e := (g.Predictions[2].Mean - want) / want; e < -0.01 || e > 0.01 {
		t.Errorf("scale=queryDB:2 predicted %.2f ms, want mean + queryDB = %.2f ms", g.Predictions[2].Mean/1e6, want/1e6)
	}
}

// TestPredictionLatencies holds the per-request series a prediction keeps:
// one simulated latency per request, in Group.Latencies' order, whose mean is
// the prediction's Mean; a spec that changes nothing simulates each request
// at its recorded latency.
func TestPredictionLatencies(t *testing.T) {
	opts := budget.DefaultOptions
	for _, s := range []string{"overlap=callUpstream,queryDB", "scale=nothingMatches:2"} {
		p, err := budget.ParsePrediction(s)
		if err != nil {
			t.Fatal(err)
		}
		opts.Predictions = append(opts.Predictions, p)
	}
	g := only(t, fixture.Analyze(t, fixture.Scenario(t, "serial").Path, opts))
	for _, p := range g.Predictions {
		if len(p.Latencies) != len(g.Latencies) {
			t.Fatalf("%s: %d simulated latencies, want one per request (%d)", p.Spec, len(p.Latencies), len(g.Latencies))
		}
		var sum float64
		for _, l := range p.Latencies {
			sum += float64(l)
		}
		if mean := sum / float64(len(p.Latencies)); math.Abs(mean-p.Mean) > 1 {
			t.Errorf("%s: series mean %.0f ns, Mean %.0f ns", p.Spec, mean, p.Mean)
		}
	}
	for i, l := range g.Predictions[1].Latencies {
		if d := l - g.Latencies[i]; d < -1000 || d > 1000 {
			t.Fatalf("request %d: a spec matching nothing simulates %d ns, recorded %d ns", i, l, g.Latencies[i])
		}
	}
}

func TestOffPathRemoveGainsNothing(t *testing.T) {
	opts := budget.DefaultOptions
	p, _ := budget.ParsePrediction("remove=queryDB")
	opts.Predictions = []budget.Prediction{p}
	g := only(t, fixture.Analyze(t, fixture.Scenario(t, "waitgroup").Path, opts))
	if gain := (g.Latency.Mean - g.Predictions[0].Mean) / g.Latency.Mean; gain > 0.02 {
		t.Errorf("removing the shorter parallel branch gains %.1f%%, want ~0", 100*gain)
	}
}

func TestHandoff(t *testing.T) {
	rec := fixture.Scenario(t, "handoff")
	res := fixture.Analyze(t, rec.Path, budget.DefaultOptions)
	invariants(t, res)
	g := only(t, res)
	// The parent waits for the worker's answer on a channel; the worker's
	// network wait explains it (a borrowed timeline) under the handoff frame.
	recv := term(t, res, g, "demotrace.handoff", "", frame.ChanRecv)
	within(t, "handoff receive", ms(recv.Critical, g), rec.Config.DB)
	if net := float64(recv.Causes[frame.Network]) / float64(recv.Critical); net < 0.8 {
		t.Errorf("handoff: network is %.0f%% of the wait for the worker, want most", 100*net)
	}
}

func TestContention(t *testing.T) {
	for _, c := range []struct{ sc, frame, mech string }{{"contention", "lockedSection", "Mutex"}, {"pool", "pooled", ""}} {
		t.Run(c.sc, func(t *testing.T) {
			res := fixture.Analyze(t, fixture.Scenario(t, c.sc).Path, budget.DefaultOptions)
			invariants(t, res)
			g := only(t, res)
			kind := frame.Sync
			if c.sc == "pool" {
				kind = frame.ChanSend
			}
			ts := term(t, res, g, c.frame, c.mech, kind)
			if ts.Contention == 0 || float64(ts.Contention) < 0.9*float64(ts.Critical) {
				t.Errorf("%s: contention %.2f of %.2f ms critical, want the waits ended by other requests", c.frame, ms(ts.Contention, g), ms(ts.Critical, g))
			}
		})
	}
}

func TestInferredRequests(t *testing.T) {
	rec := fixture.Scenario(t, "notasks")
	res := fixture.Analyze(t, rec.Path, budget.DefaultOptions)
	invariants(t, res)
	if !res.Info.Inferred {
		t.Fatal("requests not marked inferred")
	}
	var handler *budget.Group
	for _, g := range res.Groups {
		if strings.Contains(g.Name, "handler") && g.Count > 0 {
			for _, ts := range g.Terms {
				if strings.HasSuffix(res.Terms[ts.Term].Frame, "callUpstream") {
					handler = g
				}
			}
		}
	}
	if handler == nil {
		t.Fatalf("no inferred group with the handler's terms: %v", names(res))
	}
	// Back-to-back requests on one keep-alive connection can merge; most
	// must still be found.
	if handler.Count < rec.Summary.Requests/2 {
		t.Errorf("inferred %d of %d requests", handler.Count, rec.Summary.Requests)
	}
	found := false
	for _, w := range res.Warnings {
		if f, ok := w.(*budget.Finding); ok && f.Kind == budget.FindInferred {
			found = true
		}
	}
	if !found {
		t.Error("no finding says the requests were inferred")
	}
}

func names(res *budget.Result) []string {
	var out []string
	for _, g := range res.Groups {
		out = append(out, g.Name)
	}
	return out
}

func TestTasksOnlyIgnoresHTTP(t *testing.T) {
	opts := budget.DefaultOptions
	opts.Infer = budget.InferTasks
	res := fixture.Analyze(t, fixture.Scenario(t, "notasks").Path, opts)
	if len(res.Groups) != 0 {
		t.Fatalf("InferTasks on a trace without tasks found %v", names(res))
	}
	if f, ok := res.Warnings[0].(*budget.Finding); !ok || f.Kind != budget.FindNoRequests || !strings.Contains(f.Text, "trace.NewTask") {
		t.Errorf("first warning = %v, want a no-requests finding that says how to add tasks", res.Warnings[0])
	}
}

func TestParsePrediction(t *testing.T) {
	for _, c := range []struct {
		spec string
		ok   bool
	}{{"remove=a", true}, {"scale=a:0.5", true}, {"overlap=a,b", true}, {"scale=a", false}, {"scale=a:-1", false}, {"overlap=a", false}, {"frob=a", false}, {"remove", false}} {
		_, err := budget.ParsePrediction(c.spec)
		if (err == nil) != c.ok {
			t.Errorf("ParsePrediction(%q) error = %v, want ok=%v", c.spec, err, c.ok)
		}
	}
	if !budget.MatchName("main.callUpstream", "callUpstream") || budget.MatchName("main.xcallUpstream", "callUpstream") {
		t.Error("MatchName matches by suffix at a . or / boundary only")
	}
}
