package agent

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/latscope/latscope/tracelog"
)

// stallChildEnv makes the test binary a tiny service with the agent's
// metrics (TestStallChild) instead of running the tests.
const stallChildEnv = "LATSCOPE_STALL_CHILD"

// TestStallChild is the child process of TestStallSIGSTOP: an agent with
// metrics and no recorder, serving /metrics on loopback; it prints the
// address and runs until its stdin closes.
func TestStallChild(t *testing.T) {
	if os.Getenv(stallChildEnv) != "1" {
		t.Skip("the child process of TestStallSIGSTOP")
	}
	reg := prometheus.NewRegistry()
	a, err := New(Options{NoRecorder: true, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Printf("listening %s\n", ln.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
}

// TestStallSIGSTOP stops a child process running the agent with SIGSTOP
// for stop, continues it, and reads its stall counter over HTTP. The
// probe's deadline falls within one period after the stop begins, and it
// wakes only after SIGCONT, so that wake-up is late by at least
// stop − ProbeEvery; and all the lateness counted is within the child's
// life, since every deadline is after its agent started.
func TestStallSIGSTOP(t *testing.T) {
	const stop = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStallChild$")
	cmd.Env = append(os.Environ(), stallChildEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("child: %q, %v", line, err)
	}
	url := "http://" + addr + "/metrics"
	time.Sleep(3 * tracelog.ProbeEvery) // the probe runs
	sec0, n0 := stallCounters(t, url)
	begin := time.Now()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(stop)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * tracelog.ProbeEvery) // the late wake-up is counted
	sec1, n1 := stallCounters(t, url)
	life := time.Since(started)
	grew := time.Duration((sec1 - sec0) * float64(time.Second))
	t.Logf("stopped %v: stall seconds +%v, stalls +%g, %v after the stop began", stop, grew, n1-n0, time.Since(begin))
	if least := stop - tracelog.ProbeEvery; grew < least {
		t.Errorf("stall seconds grew by %v over a %v stop; want at least %v", grew, stop, least)
	}
	if total := time.Duration(sec1 * float64(time.Second)); total > life {
		t.Errorf("stall seconds %v, more than the child's %v of life", total, life)
	}
	if n1-n0 < 1 {
		t.Errorf("stalls grew by %g, want at least 1", n1-n0)
	}
}

// stallCounters scrapes url and returns the stall counters.
func stallCounters(t *testing.T, url string) (seconds, stalls float64) {
	t.Helper()
	fams := scrapeURL(t, url)
	get := func(name string) float64 {
		f := fams[name]
		if f == nil || f.GetType() != dto.MetricType_COUNTER || len(f.GetMetric()) != 1 {
			t.Fatalf("%s: not one counter in the child's metrics: %v", name, f)
		}
		return f.GetMetric()[0].GetCounter().GetValue()
	}
	return get("latscope_stall_seconds_total"), get("latscope_stalls_total")
}
