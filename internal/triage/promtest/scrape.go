package promtest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
)

// NodeExporterBinary is Debian's name for node_exporter.
const NodeExporterBinary = "prometheus-node-exporter"

// NodeExporter starts a real node_exporter with only its pressure
// collector (Linux PSI: /proc/pressure) on a free 127.0.0.1 port and
// returns its address (host:port, the instance label Prometheus gives
// it). It is killed when t ends. A machine without the binary or without
// PSI skips t, loudly.
func NodeExporter(t testing.TB) string {
	t.Helper()
	tier.Require(t, "a node_exporter")
	bin, err := exec.LookPath(NodeExporterBinary)
	if err != nil {
		if bin, err = exec.LookPath("node_exporter"); err != nil {
			t.Skip("SKIP (loud): node_exporter is not installed (Debian package prometheus-node-exporter); the test against the database host's metrics did not run")
		}
	}
	if _, err := os.Stat("/proc/pressure/cpu"); err != nil {
		t.Skipf("SKIP (loud): this kernel has no PSI (%v): node_exporter's pressure collector has nothing to export", err)
	}
	addr := freeAddr(t)
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--collector.disable-defaults", "--collector.pressure", "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	waitReady(t, cmd, &logs, "http://"+addr+"/metrics", "node_exporter")
	return addr
}

// StartScraping starts a real Prometheus with an empty data directory
// that scrapes targets (host:port, job "node") every second, and returns
// its base URL once it is ready. It is killed and its directory removed
// when t ends; a missing prometheus skips t, loudly.
func StartScraping(t testing.TB, targets ...string) string {
	t.Helper()
	tier.Require(t, "a Prometheus server")
	prom, _, skip := Binaries()
	if skip != "" {
		t.Skip(skip)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = fmt.Sprintf("%q", tg)
	}
	yml := "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: [" + strings.Join(quoted, ", ") + "]\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var logs bytes.Buffer
	cmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	url := "http://" + addr
	waitReady(t, cmd, &logs, url+"/-/ready", "prometheus")
	return url
}

// waitReady starts cmd, kills it when t ends, and waits up to 30 s for
// ready to answer 200.
func waitReady(t testing.TB, cmd *exec.Cmd, logs *bytes.Buffer, ready, name string) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ready, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("%s exited before it was ready:\n%s", name, tail(logs.Bytes()))
		case <-ctx.Done():
			t.Fatalf("%s not ready within 30 s:\n%s", name, tail(logs.Bytes()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
