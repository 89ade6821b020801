package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/capture"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/tier"
)

// handlerLog is the service's own timer: when each GET /work began and
// how long its handler ran.
type handlerLog struct {
	mu    sync.Mutex
	start []time.Time
	dur   []time.Duration
}

func (h *handlerLog) add(start time.Time, d time.Duration) {
	h.mu.Lock()
	h.start, h.dur = append(h.start, start), append(h.dur, d)
	h.mu.Unlock()
}

// within counts the requests that overlap [from, to] and the mean of
// their handlers' times.
func (h *handlerLog) within(from, to time.Time) (n int, mean time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var sum time.Duration
	for i, s := range h.start {
		if s.Before(to) && s.Add(h.dur[i]).After(from) {
			n++
			sum += h.dur[i]
		}
	}
	if n > 0 {
		mean = sum / time.Duration(n)
	}
	return n, mean
}

// TestCaptureAgentPprof is `latscope capture` against a service that
// mounts net/http/pprof on the router the agent wraps, with the
// slow-request recorder on (issue #36: the capture's own 2 s trace and
// profile requests became requests of the service, +8.6 ms on one mean,
// and set off a snapshot of themselves). The capture's trace must hold
// the service's route only, with no request as long as the capture's own,
// and the capture's requests must not set the recorder off although they
// last far beyond the trigger (checkCaptureSnapshot); a slow request of the
// service's afterwards sets it off exactly once (the control). The capture's own
// /metrics read, which the service here answers 404, is left out too by
// its User-Agent (tracelog.CaptureUserAgent): the trace has held it as a
// "(no route)" request when it ended just before the trace began. Truth:
// the handler's own timer.
//
// The count and the mean are judged against the handler's requests that
// overlap the capture call, a set that holds every request the trace can
// hold: the trace's count is at most theirs, and the requests cut by the
// trace's edges (it starts after the call and ends before its return) are
// not counted. The mean over a task is at least its handler's (the task
// begins before the handler and ends after it) and the agent's work around
// the handler is microseconds: the bar of 5 % leaves room for the edge
// requests' share of the handler set, not for a 2 s request.
func TestCaptureAgentPprof(t *testing.T) {
	tier.Busy(t)
	// The trigger: far above what the service's own requests take on a
	// busy host (up to 166 ms were seen with a burner per core, which a
	// 100 ms trigger rightly caught), far below the capture's 2 s.
	const threshold = 500 * time.Millisecond
	a, snaps := recorderAgent(t, threshold, time.Millisecond)
	var hl handlerLog
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		time.Sleep(5 * time.Millisecond)
		agenttest.Burn(time.Millisecond)
		if r.URL.Query().Has("slow") {
			time.Sleep(2 * threshold)
		}
		w.Write([]byte("ok\n"))
		hl.add(start, time.Since(start))
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := httptest.NewServer(a.Handler(mux))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := make(chan error, 1)
	go func() {
		o := loadgen.DefaultOptions
		o.URL, o.Clients, o.Duration, o.Warmup = srv.URL+"/work", 4, 4*time.Second, 0
		load <- loadgen.Run(ctx, o, func(loadgen.Result) {})
	}()
	time.Sleep(time.Second)
	dir := filepath.Join(t.TempDir(), "cap")
	o := capture.DefaultOptions
	o.URL, o.Seconds = srv.URL, 2
	from := time.Now()
	if _, err := capture.Run(ctx, dir, o); err != nil {
		t.Fatal(err)
	}
	to := time.Now()
	if err := <-load; err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-snaps:
		checkCaptureSnapshot(t, p, threshold, to.Sub(from))
	default:
	}

	res, err := fixture.AnalyzeFile(filepath.Join(dir, capture.TraceFile), budget.DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range res.Groups {
		if g.Name != "GET /work" {
			t.Errorf("group %q (%d requests, longest %v) in the capture: want GET /work only", g.Name, g.Count, time.Duration(g.Latency.Max))
		}
	}
	g := group(t, res, "GET /work")
	n, hmean := hl.within(from, to)
	mean := time.Duration(g.Latency.Mean)
	t.Logf("capture %v: GET /work %d requests, mean %v, longest %v; the handler's timer over the capture call: %d requests, mean %v (%+.1f %%)",
		to.Sub(from).Round(time.Millisecond), g.Count, mean, time.Duration(g.Latency.Max), n, hmean, 100*(float64(mean)/float64(hmean)-1))
	if g.Count == 0 || g.Count > n {
		t.Errorf("%d GET /work requests in the capture, want 1 to %d (the handler's requests that overlap the capture call)", g.Count, n)
	}
	if max := time.Duration(g.Latency.Max); max >= time.Second {
		t.Errorf("longest GET /work %v: the capture's own requests (%v) were counted", max, to.Sub(from))
	}
	if d := float64(mean)/float64(hmean) - 1; d < -0.05 || d > 0.05 {
		t.Errorf("mean %v against the handler's %v (%+.1f %%): want within 5 %%", mean, hmean, 100*d)
	}

	// The control: a request of the service's that is slow sets the
	// recorder off, once.
	if code, _ := agenttest.Get(t, nil, srv.URL+"/work?slow=1"); code != http.StatusOK {
		t.Fatalf("slow request: status %d", code)
	}
	select {
	case <-snaps:
	case <-time.After(15 * time.Second):
		t.Fatal("no snapshot within 15 s of the slow request: the control failed, so the silence above proves nothing")
	}
	select {
	case p := <-snaps:
		t.Errorf("a second snapshot %s: one request was slow", p)
	case <-time.After(200 * time.Millisecond):
	}
}

// checkCaptureSnapshot judges a snapshot the recorder wrote during the
// capture, which lasted took. The capture's own trace and profile requests
// must not have set it off: its trace holds no request but the service's
// GET /work. A GET /work request over the trigger sets it off rightly:
// the service's requests take about 6 ms, but on a busy host (this test
// runs beside the fast tier, on two cores) one of them now and then waits
// for a CPU for hundreds of milliseconds (219 ms was seen with a burner
// per core), so such a snapshot is logged, not failed. A snapshot with
// neither is unexplained, and fails.
func checkCaptureSnapshot(t *testing.T, path string, threshold, took time.Duration) {
	t.Helper()
	res, err := fixture.AnalyzeFile(path, budget.DefaultOptions)
	if err != nil {
		t.Fatalf("snapshot %s during the capture: %v", path, err)
	}
	var slowest time.Duration
	for _, g := range res.Groups {
		if g.Name != "GET /work" {
			t.Errorf("snapshot %s during the capture holds %q (%d requests, longest %v): the capture's own %v trace and profile requests set off the recorder", path, g.Name, g.Count, time.Duration(g.Latency.Max), took)
			continue
		}
		slowest = max(slowest, time.Duration(g.Latency.Max))
	}
	if slowest <= threshold {
		t.Errorf("snapshot %s during the capture, and no GET /work request in it over the %v trigger (longest %v): what set it off?", path, threshold, slowest)
		return
	}
	t.Logf("snapshot %s during the capture, set off by a GET /work request of %v (the trigger %v), none of the capture's own: the service waited for a CPU", path, slowest, threshold)
}
