package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/latscope/latscope/internal/capture"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/tier"
)

// captureService is a real service on 127.0.0.1 with net/http/pprof,
// Prometheus metrics and a /work endpoint (a task per request, 1 ms of CPU
// and 5 ms of sleep).
func captureService(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewBuildInfoCollector())
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		ctx, task := trace.NewTask(r.Context(), "work")
		defer task.End()
		trace.WithRegion(ctx, "cpu", func() {
			var sum [32]byte
			for start := time.Now(); time.Since(start) < time.Millisecond; {
				sum = sha256.Sum256(sum[:])
			}
		})
		time.Sleep(5 * time.Millisecond)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// loadDuring drives url with 4 closed-model clients until the test ends.
func loadDuring(t *testing.T, url string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		o := loadgen.DefaultOptions
		o.URL, o.Clients, o.Duration, o.Warmup = url, 4, time.Minute, 0
		loadgen.Run(ctx, o, nil)
	}()
}

// TestCapture runs `latscope capture` against a real service under load.
func TestCapture(t *testing.T) {
	tier.Timing(t)
	srv := captureService(t)
	loadDuring(t, srv.URL+"/work")
	for _, asJSON := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "cap")
		args := []string{"capture", srv.URL, "--seconds", "1", "-o", dir}
		if asJSON {
			args = append(args, "--json")
		}
		var stdout, stderr bytes.Buffer
		if err := cli.Run(context.Background(), &stdout, &stderr, args); err != nil {
			t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
		}
		m, err := capture.ReadMeta(dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.CPU.Seconds <= 0 || m.Profile == nil {
			t.Errorf("capture.json: CPU %+v, profile %v; want the metrics delta and a profile", m.CPU, m.Profile)
		}
		for _, f := range []string{capture.TraceFile, capture.ProfileFile} {
			if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
				t.Errorf("%s: %v", f, err)
			}
		}
		if !strings.Contains(stderr.String(), "process CPU over the window") {
			t.Errorf("stderr does not report the CPU counter:\n%s", stderr.String())
		}
		if !asJSON {
			t.Logf("stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
			if out := stdout.String(); !strings.Contains(out, "work") {
				t.Errorf("the analysis does not show the work requests:\n%s", out)
			}
			continue
		}
		var rep captureJSON
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("--json output: %v\n%s", err, stdout.String())
		}
		if rep.Requests.Count < 10 || rep.Trace.CPUSamples == 0 || rep.CPU.IndependentMs == nil {
			t.Errorf("analysis: %+v; want requests, CPU samples and the independent CPU figure", rep)
		}
		// The service's go_build_info names its main module; capture and a
		// later analyze of the saved trace take it as the application.
		if m.MainModule == "" || rep.Trace.Module != m.MainModule {
			t.Errorf("capture.json main_module %q, the analysis's %q; want the same, non-empty", m.MainModule, rep.Trace.Module)
		}
		stdout.Reset()
		if err := cli.Run(context.Background(), &stdout, &stderr, []string{"analyze", "--json", filepath.Join(dir, capture.TraceFile)}); err != nil {
			t.Fatalf("analyze of the capture: %v", err)
		}
		var again captureJSON
		if err := json.Unmarshal(stdout.Bytes(), &again); err != nil {
			t.Fatal(err)
		}
		if again.Trace.Module != m.MainModule {
			t.Errorf("analyze of the saved trace: main_module %q, want capture.json's %q", again.Trace.Module, m.MainModule)
		}
	}
}

// captureJSON is the part of the --json report the capture tests read.
type captureJSON struct {
	Trace struct {
		CPUSamples int    `json:"cpu_samples"`
		Module     string `json:"main_module"`
	}
	Requests struct{ Count int }
	CPU      struct {
		IndependentMs *float64 `json:"independent_ms"`
	}
}

func TestCaptureErrors(t *testing.T) {
	noPprof := httptest.NewServer(http.NotFoundHandler())
	defer noPprof.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no URL", []string{"capture", "--seconds", "1"}, "want one URL"},
		{"two URLs", []string{"capture", "http://a", "http://b"}, "want one URL"},
		{"bad seconds", []string{"capture", "--seconds", "0", "http://127.0.0.1:1"}, `invalid value "0" for flag -seconds`},
		{"unknown flag", []string{"capture", "--nope", "http://127.0.0.1:1"}, "nope"},
		{"pprof not mounted", []string{"capture", "--seconds", "1", noPprof.URL}, "net/http/pprof"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cap")
			var stdout, stderr bytes.Buffer
			err := cli.Run(context.Background(), &stdout, &stderr, append(tt.args, "-o", dir))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s exists after a failed capture", dir)
			}
		})
	}
}

func TestCaptureHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := cli.Run(context.Background(), &stdout, &stderr, []string{"capture", "-h"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"usage: latscope capture [flags] URL", "--seconds", "-no-profile", "examples:"} {
		if !strings.Contains(stdout.String(), strings.TrimPrefix(want, "-")) {
			t.Errorf("help lacks %q:\n%s", want, stdout.String())
		}
	}
}
