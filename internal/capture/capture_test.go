package capture

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/internal/tracein"
)

// service is a real service on 127.0.0.1 with net/http/pprof, Prometheus
// metrics (when metrics is set) and a /work endpoint that burns CPU.
func service(t *testing.T, metrics bool, wrap func(http.Handler) http.Handler) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if metrics {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	var h http.Handler = mux
	if wrap != nil {
		h = wrap(mux)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// busy keeps the process's CPU busy until the test ends.
func busy(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		x := 0
		for ctx.Err() == nil {
			for i := range 100000 {
				x += i * i
			}
		}
		_ = x
	}()
}

func TestRun(t *testing.T) {
	tier.Busy(t)
	srv := service(t, true, nil)
	busy(t)
	dir := filepath.Join(t.TempDir(), "cap")
	o := DefaultOptions
	o.URL, o.Seconds = srv.URL, 1
	before := processCPU(t)
	m, err := Run(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	during := processCPU(t) - before // the process's own clock over the whole capture
	got, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Trace.Bytes == 0 || got.Profile == nil || got.Profile.Bytes == 0 || got.Trace != m.Trace {
		t.Errorf("capture.json %+v, want both files with their sizes", got)
	}
	// The window's CPU reading, against the process's own clock over the
	// whole capture (which holds the window): the busy loop ran in it, so
	// it is more than a few clock ticks, and it cannot exceed the clock's
	// (plus a tick at each end). How much of a core the loop got depends on
	// what else the host runs: on a quiet host about 1 s; beside the fuzz
	// targets and the fast tier 0.25 s was seen.
	t.Logf("CPU over the window %v s; the process's clock over the capture %.3f s", got.CPU.Seconds, during)
	if got.CPU.Error != "" || got.CPU.Seconds < 0.05 || got.CPU.Seconds > during+0.02 {
		t.Errorf("CPU over the window %v s (%s), want more than 0.05 s of the busy loop and at most the process's own %.3f s", got.CPU.Seconds, got.CPU.Error, during)
	}
	f, err := os.Open(filepath.Join(dir, TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := tracein.NewReader(TraceFile, f)
	if err != nil {
		t.Fatal(err)
	}
	samples := 0
	for {
		ev, err := tr.Next()
		if err != nil {
			break
		}
		if ev.Kind == tracein.KindSample {
			samples++
		}
	}
	if samples == 0 {
		t.Error("the trace has no CPU samples: the profile did not run in the same window")
	}
	pf, err := os.Open(filepath.Join(dir, ProfileFile))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if _, err := profile.Parse(pf); err != nil {
		t.Errorf("cpu.pprof: %v", err)
	}
	if _, err := os.Stat(dir + PartialSuffix); !os.IsNotExist(err) {
		t.Errorf("%s%s left behind", dir, PartialSuffix)
	}
}

func TestRunNoMetrics(t *testing.T) {
	tier.Busy(t)
	srv := service(t, false, nil)
	dir := filepath.Join(t.TempDir(), "cap")
	o := DefaultOptions
	o.URL, o.Seconds, o.NoProfile = srv.URL, 1, true
	m, err := Run(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if m.CPU.Seconds != -1 || !strings.Contains(m.CPU.Error, "404") || len(m.Warnings) != 1 {
		t.Errorf("CPU %+v, warnings %q: want unknown, saying why", m.CPU, m.Warnings)
	}
	if m.Profile != nil {
		t.Errorf("profile %+v with NoProfile", m.Profile)
	}
	if _, err := os.Stat(filepath.Join(dir, ProfileFile)); !os.IsNotExist(err) {
		t.Error("cpu.pprof written with NoProfile")
	}
}

// TestRunErrors: each failure says what to do and leaves nothing behind.
func TestRunErrors(t *testing.T) {
	tier.Busy(t)
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	auth := service(t, true, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer right" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hang.Close()
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("go 1.26 trace\x00\x00\x00"))
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer cut.Close()
	busyProfile := service(t, true, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/debug/pprof/profile" {
				http.Error(w, "Could not enable CPU profiling: cpu profiling already in use", http.StatusInternalServerError)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	noTrace := service(t, true, func(h http.Handler) http.Handler { // pprof without its trace endpoint
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/debug/pprof/trace" {
				http.NotFound(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + ln.Addr().String()
	ln.Close()

	tests := []struct {
		name    string
		url     string
		token   string
		timeout time.Duration
		want    []string
	}{
		{"connection refused", refused, "", 0, []string{"connection refused", "is the service running"}},
		{"no pprof", notFound.URL, "", 0, []string{"404", `net/http/pprof`}},
		{"pprof without the trace endpoint", noTrace.URL, "", 0, []string{"404", "does not serve /debug/pprof/trace", "pprof.Trace"}},
		{"credentials wanted", auth.URL, "", 0, []string{"401", "wants credentials: token not given"}},
		{"token refused", auth.URL, "wrong", 0, []string{"401", "token was refused"}},
		{"timeout", hang.URL, "", 500 * time.Millisecond, []string{"timed out", "timeout may be too short"}},
		{"cut short", cut.URL, "", 0, []string{"cut after"}},
		{"server error", busyProfile.URL, "", 0, []string{"500", "cpu profiling already in use"}},
		{"bad URL", "ftp://x", "", 0, []string{"http://"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cap")
			o := Options{URL: tt.url, Seconds: 1, Token: tt.token, Timeout: tt.timeout}
			_, err := Run(context.Background(), dir, o)
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("%v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, p := range []string{dir, dir + PartialSuffix} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s left behind after a failed capture", p)
				}
			}
		})
	}
}

func TestRunExistingDir(t *testing.T) {
	dir := t.TempDir()
	_, err := Run(context.Background(), dir, Options{URL: "http://127.0.0.1:1", Seconds: 1})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("capture into an existing directory: %v, want a refusal", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		o  Options
		ok bool
	}{
		{Options{URL: "http://127.0.0.1:6060", Seconds: 5}, true},
		{Options{URL: "https://h/prefix/", Seconds: 1}, true},
		{Options{URL: "127.0.0.1:6060", Seconds: 5}, false},
		{Options{URL: "http://", Seconds: 5}, false},
		{Options{URL: "http://h/?seconds=3", Seconds: 5}, false},
		{Options{URL: "http://h", Seconds: 0}, false},
		{Options{URL: "http://h", Seconds: 5, Timeout: -1}, false},
	}
	for _, tt := range tests {
		if err := tt.o.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tt.o, err, tt.ok)
		}
	}
	if got := (Options{URL: "https://h/prefix/"}).endpoint("/metrics"); got != "https://h/prefix/metrics" {
		t.Errorf("endpoint = %q", got)
	}
}

// processCPU is the test process's user and system CPU so far, in seconds.
func processCPU(t *testing.T) float64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
