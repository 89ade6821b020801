package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/tracelog"
)

// slowTraceParent marks the one slow request of TestSlowRequestSnapshot.
const slowTraceParent = "00-5105105105105105105105105105105a-00f067aa0ba902b7-01"

// TestSlowRequestSnapshot runs a real service with the agent, drives it with
// the load generator, makes one request slow, and finds that request in
// the snapshot the flight recorder wrote, slow as the client saw it; any
// other request over the trigger in it is one the clients saw as slow too.
func TestSlowRequestSnapshot(t *testing.T) {
	tier.Timing(t)
	// The load's requests take 0.2 ms of CPU; on a busy host one took
	// 240 ms, which set a 150 ms trigger off before the slow request and
	// took the minute's one snapshot. The trigger sits 2.5× above that,
	// the slow request's sleep above the trigger.
	const trigger, sleep = 600 * time.Millisecond, 800 * time.Millisecond
	a, snaps := recorderAgent(t, trigger, time.Minute)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		agenttest.Burn(200 * time.Microsecond)
		if r.URL.Query().Has("slow") {
			time.Sleep(sleep)
		}
		w.Write([]byte("ok\n"))
	})
	srv := httptest.NewServer(a.Handler(mux))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := make(chan error, 1)
	var served int
	var clientSlow []time.Duration // load requests over the trigger, as their clients saw them
	go func() {
		o := loadgen.DefaultOptions
		o.URL, o.Clients, o.Duration, o.Warmup = srv.URL+"/work", 4, 1500*time.Millisecond, 0
		load <- loadgen.Run(ctx, o, func(r loadgen.Result) {
			if r.Error == "" {
				served++
			}
			if d := r.End().Sub(r.Start); d > trigger {
				clientSlow = append(clientSlow, d)
			}
		})
	}()
	time.Sleep(400 * time.Millisecond)
	slowStart := time.Now()
	if code, _ := agenttest.Get(t, nil, srv.URL+"/work?slow=1", "traceparent", slowTraceParent); code != 200 {
		t.Fatalf("slow request: status %d", code)
	}
	slowLatency := time.Since(slowStart)
	var path string
	select {
	case path = <-snaps:
	case <-time.After(15 * time.Second):
		t.Fatal("no snapshot within 15 s of the slow request")
	}
	if err := <-load; err != nil {
		t.Fatal(err)
	}
	if served == 0 {
		t.Fatal("the load generator got no answer")
	}
	select {
	case p := <-snaps:
		t.Errorf("a second snapshot %s: only one request was slow", p)
	default:
	}

	res, err := fixture.AnalyzeFile(path, budget.DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	g := group(t, res, "GET /work")
	if g.Count < 10 {
		t.Errorf("the snapshot holds %d GET /work requests, want the load around the slow one too", g.Count)
	}
	// The load's requests burn 200 µs, but on a busy host one may wait for
	// a CPU past the trigger now and then. A request's time in the trace
	// lies within its client's, so the snapshot holds at most as many of
	// them over the trigger as their clients saw: any more, and the
	// analysis made requests longer than they were.
	var slow []int64
	for _, l := range g.Latencies {
		if l > int64(trigger) {
			slow = append(slow, l)
		}
	}
	if len(slow) == 0 || len(slow)-1 > len(clientSlow) {
		t.Fatalf("%d requests over %v in the snapshot %v, want the slow one and at most the %d load requests their clients saw over it %v", len(slow), trigger, slow, len(clientSlow), clientSlow)
	}
	if len(clientSlow) > 0 {
		t.Logf("the clients saw %d load requests over %v: %v; the snapshot holds %d requests over it", len(clientSlow), trigger, clientSlow, len(slow))
	}
	if max := time.Duration(g.Latency.Max); max < sleep || max > slowLatency {
		t.Errorf("slowest request %v, want ≥ %v (the sleep) and ≤ %v (as the client saw it); the clients saw %d load requests over %v, each of which may have set off the one snapshot the minute allows: %v", max, sleep, slowLatency, len(clientSlow), trigger, clientSlow)
	}
	t.Logf("snapshot %s: %d GET /work requests, slowest %v (client saw %v)", path, g.Count, time.Duration(g.Latency.Max), slowLatency)
	checkSnapshotLogs(t, path, trigger)
}

// checkSnapshotLogs checks the slow request's log and the CPU and host
// samples of a snapshot.
func checkSnapshotLogs(t *testing.T, path string, trigger time.Duration) {
	evs := agenttest.FileEvents(t, path)
	slow := agenttest.Logs(evs, tracelog.Slow)
	if len(slow) != 1 {
		t.Fatalf("%d %s logs, want 1", len(slow), tracelog.Slow)
	}
	want := `route="GET /work" latency_ns=`
	if msg := slow[0].Message; !strings.HasPrefix(msg, want) || !strings.Contains(msg, fmt.Sprintf("threshold_ns=%d ", trigger.Nanoseconds())) {
		t.Errorf("slow log %q, want it to start %q and name the threshold", msg, want)
	}
	tp, err := tracelog.ParseTraceParent(slow[0].Message[strings.Index(slow[0].Message, "traceparent=")+len("traceparent="):])
	if err != nil {
		t.Fatal(err)
	}
	parent, _ := tracelog.ParseTraceParent(slowTraceParent)
	if tp.TraceID != parent.TraceID || tp.SpanID == parent.SpanID {
		t.Errorf("slow request's traceparent %v: want the caller's trace %x with a new span", tp, parent.TraceID)
	}
	cpu := agenttest.Logs(evs, tracelog.CPU)
	if len(cpu) < 2 {
		t.Fatalf("%d CPU counter logs, want periodic ones and one at snapshot time", len(cpu))
	}
	first, err1 := tracelog.ParseCPU(cpu[0].Message)
	last, err2 := tracelog.ParseCPU(cpu[len(cpu)-1].Message)
	if err1 != nil || err2 != nil || last < first {
		t.Errorf("CPU counter %q … %q: %v %v, want it to grow", cpu[0].Message, cpu[len(cpu)-1].Message, err1, err2)
	}
	host := agenttest.Logs(evs, hostsig.LogCategory)
	if len(host) != len(cpu) {
		t.Errorf("%d host samples and %d CPU counter logs, want one of each per sample", len(host), len(cpu))
	}
	for _, h := range host {
		if _, err := hostsig.ParseLog(h.Message); err != nil {
			t.Errorf("host sample: %v", err)
		}
	}
}

// group returns the result's group named name.
func group(t *testing.T, res *budget.Result, name string) *budget.Group {
	t.Helper()
	var names []string
	for _, g := range res.Groups {
		if g.Name == name {
			return g
		}
		names = append(names, g.Name)
	}
	t.Fatalf("no request group %q in %v", name, names)
	return nil
}

// recorderAgent starts an agent with the slow-request recorder on (trigger
// threshold, at least minInterval between snapshots) in a temporary
// directory, closed when the test ends, and returns it with the channel its
// snapshots' paths arrive on.
func recorderAgent(t *testing.T, threshold, minInterval time.Duration) (*agent.Agent, chan string) {
	t.Helper()
	snaps := make(chan string, 4)
	a, err := agent.New(agent.Options{
		Dir:         t.TempDir(),
		Trigger:     agent.Trigger{Threshold: threshold},
		MinInterval: minInterval,
		OnSnapshot: func(path string, err error) {
			if err != nil {
				t.Errorf("snapshot: %v", err)
			}
			snaps <- path
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, snaps
}
