package capture

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/tier"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// buildInfoService is a real service whose /metrics has client_golang's
// process and build-info collectors.
func buildInfoService(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewBuildInfoCollector())
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// testModule is the main module of this test binary, as the build-info
// collector sees it.
func testModule(t *testing.T) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path == "" {
		t.Fatalf("no main module in this test binary's build info")
	}
	return bi.Main.Path
}

// TestRunMainModule: capture.json names the main module that the
// service's go_build_info says, and none when the service has no
// build-info collector.
func TestRunMainModule(t *testing.T) {
	tier.Busy(t)
	for _, tt := range []struct {
		name string
		srv  func(*testing.T) *httptest.Server
		want string
	}{
		{"go_build_info", buildInfoService, testModule(t)},
		{"no go_build_info", func(t *testing.T) *httptest.Server { return service(t, true, nil) }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cap")
			o := DefaultOptions
			o.URL, o.Seconds = tt.srv(t).URL, 1
			m, err := Run(context.Background(), dir, o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadMeta(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got.MainModule != tt.want || m.MainModule != tt.want {
				t.Errorf("main module %q (returned %q), want %q", got.MainModule, m.MainModule, tt.want)
			}
			if got.CPU.Error != "" || len(got.Warnings) != 0 {
				t.Errorf("CPU error %q, warnings %q: want none", got.CPU.Error, got.Warnings)
			}
			b, err := os.ReadFile(filepath.Join(dir, MetaFile))
			if err != nil {
				t.Fatal(err)
			}
			if has := bytes.Contains(b, []byte(`"main_module": "`+tt.want+`"`)); has != (tt.want != "") || tt.want == "" && bytes.Contains(b, []byte("main_module")) {
				t.Errorf("capture.json:\n%s\nwant main_module %q (absent when empty)", b, tt.want)
			}
		})
	}
}

// TestParseMainModuleCollector parses what client_golang's build-info
// collector really writes.
func TestParseMainModuleCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewBuildInfoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	text := rec.Body.String()
	if !strings.Contains(text, "go_build_info{") {
		t.Fatalf("no go_build_info in\n%s", text)
	}
	// The counter's value is whatever this process has used (0 on a busy
	// host, at 10 ms ticks): the test wants the one the collector wrote.
	m := regexp.MustCompile(`(?m)^process_cpu_seconds_total (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no process_cpu_seconds_total in\n%s", text)
	}
	wantCPU, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	cpu, module, err := parseMetrics(strings.NewReader(text), textFmt)
	if want := testModule(t); module != want || err != nil || cpu != wantCPU {
		t.Errorf("parseMetrics = %v, %q, %v; want the CPU counter %v and %q", cpu, module, err, wantCPU, want)
	}
}

func TestParseMainModule(t *testing.T) {
	const cpu = "process_cpu_seconds_total 1.5\n"
	for _, tt := range []struct{ name, in, want string }{
		{"collector", "# HELP go_build_info Build information about the main Go module.\n# TYPE go_build_info gauge\n" +
			`go_build_info{checksum="",path="github.com/acme/svc",version="(devel)"} 1` + "\n" + cpu, "github.com/acme/svc"},
		{"after the CPU counter", cpu + `go_build_info{path="github.com/acme/svc"} 1` + "\n", "github.com/acme/svc"},
		{"absent", cpu + "go_goroutines 7\n", ""},
		{"no path label", cpu + `go_build_info{version="v1.2.3"} 1` + "\n", ""},
		{"empty path", cpu + `go_build_info{path=""} 1` + "\n", ""},
		{"command-line-arguments", cpu + `go_build_info{path="command-line-arguments"} 1` + "\n", ""},
		{"same path twice", cpu + `go_build_info{path="example.com/a",version="v1"} 1` + "\n" + `go_build_info{path="example.com/a",version="v2"} 1` + "\n", "example.com/a"},
		{"two modules", cpu + `go_build_info{path="example.com/a"} 1` + "\n" + `go_build_info{path="example.com/b"} 1` + "\n", ""},
		{"without the CPU counter", `go_build_info{path="github.com/acme/svc"} 1` + "\n", "github.com/acme/svc"},
		{"before a malformed line", `go_build_info{path="github.com/acme/svc"} 1` + "\n" + "process_cpu_seconds_total twelve\n", "github.com/acme/svc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseMainModule(strings.NewReader(tt.in), textFmt); got != tt.want {
				t.Errorf("= %q, want %q", got, tt.want)
			}
		})
	}
	// The CPU counter is read as before, whatever follows it.
	v, err := ParseCPUSeconds(strings.NewReader(cpu+`go_build_info{path="github.com/acme/svc"} 1`+"\n"+"garbage{\n"), textFmt)
	if v != 1.5 || err != nil {
		t.Errorf("ParseCPUSeconds = %v, %v; want 1.5 despite the malformed line after it", v, err)
	}
}
