package agentprom

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

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/agent/internal/tier"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/tracelog"
)

// stallChildEnv makes the test binary a tiny service with the agent's
// metrics (TestStallChild) instead of running the tests.
const stallChildEnv = "LATSCOPE_STALL_CHILD"

// TestStallChild is the child process of TestStallSIGSTOP: an agent with
// metrics and no recorder, serving /metrics on loopback; it prints the
// address and runs until its stdin closes.
func TestStallChild(t *testing.T) {
	mode := os.Getenv(stallChildEnv)
	if mode == "" {
		t.Skip("the child process of TestStallSIGSTOP and TestStallQuota")
	}
	if mode == "burn" { // keep a CPU busy, for the quota to throttle
		go func() {
			for {
				agenttest.Burn(time.Second)
			}
		}()
	}
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, Metrics: New(reg)})
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
	tier.Timing(t)
	const stop = 300 * time.Millisecond
	started := time.Now()
	cmd, url := startStallChild(t, "1")
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

// startStallChild runs TestStallChild in a child process (mode "1", or
// "burn" to keep a CPU busy) and returns it with its metrics URL; the
// child is continued and ended when the test ends.
func startStallChild(t *testing.T, mode string) (*exec.Cmd, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStallChild$")
	cmd.Env = append(os.Environ(), stallChildEnv+"="+mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		cmd.Wait()
		cancel()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("child: %q, %v", line, err)
	}
	return cmd, "http://" + addr + "/metrics"
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

// TestStallQuota puts a child running the agent and a CPU burner into a
// cgroup with a CFS quota of 0.2 CPU per 100 ms (root only), and reads its
// counters over HTTP before and after a second of it: the throttled
// periods and time grow (the host counters of a real non-root cgroup), and
// so does the stall counter, since the probe cannot run while the cgroup
// is throttled; no counter of lateness exceeds the child's life.
func TestStallQuota(t *testing.T) {
	tier.Timing(t)
	if os.Geteuid() != 0 {
		t.Skip("SKIP: LOUD: a CFS quota needs root to make a cgroup; the stall counter under throttling is untested here (TestStallSIGSTOP still runs)")
	}
	cg, err := hostsig.NewCgroup(fmt.Sprintf("latscope-agent-test-%d", os.Getpid()))
	if err != nil {
		t.Skipf("SKIP: LOUD: cannot make a cgroup on this machine: %v", err)
	}
	defer cg.Remove()
	if err := cg.SetQuota(0.2, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	cmd, url := startStallChild(t, "burn")
	if err := cg.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the sampler follows the child into the cgroup
	before := scrapeURL(t, url)
	time.Sleep(time.Second)
	after := scrapeURL(t, url)
	life := time.Since(started)
	grew := func(name string) float64 {
		b, a := find(before, name, nil), find(after, name, nil)
		if b == nil || a == nil {
			t.Errorf("%s: not exported by a child in cgroup %s", name, cg.Dir)
			return 0
		}
		return a.GetCounter().GetValue() - b.GetCounter().GetValue()
	}
	periods, throttled := grew("latscope_cfs_periods_total"), grew("latscope_cfs_throttled_periods_total")
	throttledSec, stallSec, stalls := grew("latscope_cfs_throttled_seconds_total"), grew("latscope_stall_seconds_total"), grew("latscope_stalls_total")
	t.Logf("in 1 s at 0.2 CPU per 100 ms: periods +%g, throttled +%g, throttled +%.3f s, stalls +%g, stall +%.3f s", periods, throttled, throttledSec, stalls, stallSec)
	if throttled < 1 || throttledSec <= 0 {
		t.Errorf("throttled periods +%g and seconds +%g under a quota a burner exceeds; want both to grow", throttled, throttledSec)
	}
	if stalls < 1 || stallSec <= 0 {
		t.Errorf("stalls +%g, stall seconds +%g while the cgroup was throttled; want both to grow", stalls, stallSec)
	}
	if total := find(after, "latscope_stall_seconds_total", nil).GetCounter().GetValue(); total > life.Seconds() {
		t.Errorf("stall seconds %.3f, more than the child's %v of life", total, life)
	}
}
