package fleet

import (
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// needPrometheus skips loudly without the server binary.
func needPrometheus(t *testing.T) {
	t.Helper()
	if _, err := FindPrometheus(""); err != nil {
		t.Skipf("SKIP: %v", err)
	}
}

// TestPrometheusScrapesTargets starts a private Prometheus against a real
// /metrics endpoint, reads a counter back through the query API, and
// checks that Stop removes the directory.
func TestPrometheusScrapesTargets(t *testing.T) {
	tier.Busy(t)
	needPrometheus(t)
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "fleet_test_total", Help: "a test counter"})
	reg.MustRegister(c)
	c.Add(7)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go srv.Serve(ln)
	defer srv.Close()
	p, err := StartPrometheus(t.Context(), PromOptions{Job: "fleet-test", Targets: []string{ln.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if cfg, _ := os.ReadFile(p.Dir + "/prometheus.yml"); !strings.Contains(string(cfg), "scrape_interval: 1s") {
		t.Errorf("config:\n%s", cfg)
	}
	var got string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		got, err = instantQuery(t.Context(), p.URL, `fleet_test_total{job="fleet-test"}`)
		if err == nil && got != "" {
			break
		}
	}
	if got != "7" {
		t.Fatalf("fleet_test_total = %q (%v), want 7", got, err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stop left %s (%v)", p.Dir, err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestPrometheusMissing: a missing binary is ErrNoPrometheus, before any
// directory is made.
func TestPrometheusMissing(t *testing.T) {
	_, err := StartPrometheus(t.Context(), PromOptions{Bin: "/nonexistent/prometheus", Job: "x"})
	if !errors.Is(err, ErrNoPrometheus) {
		t.Errorf("err = %v, want ErrNoPrometheus", err)
	}
}
