package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"testing"

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
