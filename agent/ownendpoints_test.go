package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/tracelog"
)

// TestOwnEndpointsAreNotRequests: a router the agent wraps that also
// mounts net/http/pprof (and the agent's own endpoints) serves them, but a
// capture's profile and trace requests, and any request that carries its
// User-Agent, are no task, no metric and no trigger of the recorder: only
// the service's own requests are.
func TestOwnEndpointsAreNotRequests(t *testing.T) {
	m := newFakeMetrics()
	a, err := New(Options{NoRecorder: true, ProbeEvery: -1, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/admin/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc(EndpointsPrefix+"x", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "agent") })
	srv := httptest.NewServer(a.Handler(mux))
	defer srv.Close()
	// the last but one: latscope capture's own request (its /metrics read,
	// here to a route of the service's), by its User-Agent
	paths := []string{"/work", "/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/admin/debug/pprof/cmdline", EndpointsPrefix + "x", "/work#capture", "/work"}
	evs := traced(t, func() {
		for _, p := range paths {
			req, err := http.NewRequest(http.MethodGet, srv.URL+strings.TrimSuffix(p, "#capture"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(p, "#capture") {
				req.Header.Set("User-Agent", tracelog.CaptureUserAgent+"/test")
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("%s: status %d: the endpoint must still be served", p, resp.StatusCode)
			}
		}
	})
	var tasks []string
	for _, ev := range evs {
		if ev.Kind == agenttest.KindTaskBegin {
			tasks = append(tasks, ev.Name)
		}
	}
	if len(tasks) != 2 || tasks[0] != "GET /work" || tasks[1] != "GET /work" {
		t.Errorf("tasks %q, want the two GET /work only", tasks)
	}
	if len(m.order) != 1 || m.order[0] != "GET /work" {
		t.Errorf("metrics of routes %q, want GET /work only", m.order)
	}
}

// TestOwnEndpointsDoNotTrigger: with the flight recorder on and a fixed
// threshold of 20 ms, a real 1 s pprof CPU profile (what `latscope
// capture` fetches) sets off no snapshot, and a slow request of the
// service's own then does: the recorder's trigger sees only the service's
// requests (issue #36). In a child process, as the recorder's other tests.
func TestOwnEndpointsDoNotTrigger(t *testing.T) {
	if os.Getenv(childEnv) != t.Name() {
		runChild(t, t.Name())
		return
	}
	snaps := make(chan string, 4)
	a, err := New(Options{
		Dir:         t.TempDir(),
		Trigger:     Trigger{Threshold: 20 * time.Millisecond},
		MinInterval: time.Millisecond,
		ProbeEvery:  -1,
		OnSnapshot:  sendSnapshot(t, snaps),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(40 * time.Millisecond)
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := httptest.NewServer(a.Handler(mux))
	defer srv.Close()
	start := time.Now()
	if code, _ := get(t, nil, srv.URL+"/debug/pprof/profile?seconds=1"); code != 200 {
		t.Fatalf("pprof profile: status %d", code)
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("the profile took %v: not the slow own request the test needs", d)
	}
	select {
	case p := <-snaps:
		t.Fatalf("a snapshot after a pprof profile, a request of no one's: %s", p)
	case <-time.After(2 * time.Second):
	}
	if code, _ := get(t, nil, srv.URL+"/work"); code != 200 {
		t.Fatalf("/work: status %d", code)
	}
	select {
	case p := <-snaps:
		// its name carries the trigger's reason: the 40 ms request's, not
		// the second-long profile's arriving late
		if m := regexp.MustCompile(`-slow-(\d+)ms`).FindStringSubmatch(filepath.Base(p)); m == nil || len(m[1]) > 3 {
			t.Errorf("snapshot %s: want the slow /work request's (slow-4xms)", filepath.Base(p))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no snapshot within 30 s of the service's slow request: the trigger does not work, so the test above proves nothing")
	}
}
