package analysis

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/kept"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/tier"
)

// TestCPULogFromAgent: a trace taken while latscope's agent runs carries
// the process CPU counter, and the report uses it as the independent CPU
// reading when none is given. The truth is the process's own counter read
// from /proc just before the trace starts and just after it stops. The
// trace and its truth were recorded once (kept.Trace; LATSCOPE_RETRACE=1
// records them again); TestCPULogFromAgentLive records anew.
func TestCPULogFromAgent(t *testing.T) {
	t.Parallel()
	var truth time.Duration
	path := kept.Trace(t, "cpulog-agent", func(w io.Writer) error {
		var err error
		if truth, err = recordCPULog(t, w); err != nil {
			return err
		}
		return atomicfile.WriteString(filepath.Join("testdata", "cpulog-agent.truth"), truth.String()+"\n")
	})
	b, err := os.ReadFile(filepath.Join("testdata", "cpulog-agent.truth"))
	if err != nil {
		t.Fatal(err)
	}
	if truth, err = time.ParseDuration(strings.TrimSpace(string(b))); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkCPULog(t, f, truth)
}

// TestCPULogFromAgentLive is TestCPULogFromAgent on a trace recorded now.
func TestCPULogFromAgentLive(t *testing.T) {
	tier.Timing(t)
	var buf bytes.Buffer
	truth, err := recordCPULog(t, &buf)
	if err != nil {
		t.Skipf("SKIP: %v", err)
	}
	checkCPULog(t, &buf, truth)
}

// recordCPULog traces requests that burn CPU while the agent runs, into w,
// and returns the process CPU /proc counted around the trace.
func recordCPULog(t *testing.T, w io.Writer) (time.Duration, error) {
	a, err := agent.New(agent.Options{Dir: t.TempDir(), SampleInterval: 20 * time.Millisecond})
	if err != nil {
		return 0, fmt.Errorf("the agent cannot start its flight recorder here: %w", err)
	}
	defer a.Close()
	before, err := procCPU()
	if err != nil {
		return 0, fmt.Errorf("no /proc to read the truth from: %w", err)
	}
	if err := trace.Start(w); err != nil {
		return 0, fmt.Errorf("cannot trace this test binary (another trace is running?): %w", err)
	}
	var wg sync.WaitGroup
	for w := range 3 { // more goroutines than cores on the 2-core machine: the rate still holds steady
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				ctx, task := trace.NewTask(context.Background(), "request")
				spin(ctx, time.Duration(60+10*((w+i)%3))*time.Millisecond)
				task.End()
			}
		}()
	}
	wg.Wait()
	trace.Stop()
	after, err := procCPU()
	if err != nil {
		return 0, err
	}
	return after - before, nil
}

// checkCPULog analyses the trace in r and checks the agent's CPU log
// against truth.
func checkCPULog(t *testing.T, r io.Reader, truth time.Duration) {
	t.Helper()
	res, err := Reader(context.Background(), "agent.trace", r, budget.DefaultOptions, false)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := render.Build(res, render.Inputs{File: "agent.trace", CPUSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Trace
	if tr.CPUSource != "agent-log" || tr.CPUSeconds == nil {
		t.Fatalf("CPU source %q (note %q), %d logs: want the agent's counter log", tr.CPUSource, tr.CPUNote, res.Info.CPULog.Samples)
	}
	got := time.Duration(*tr.CPUSeconds * 1e9)
	// Both readings are in clock ticks (10 ms): two ticks each, and the
	// edges of the window extrapolated at the logged rate (≤ 2 intervals of
	// a steady burn): 5 % of the truth.
	tol := 4*10*time.Millisecond + time.Duration(0.05*float64(truth))
	t.Logf("agent log: %v over %d logs (%.0f%% of the window); /proc around the trace: %v", got, res.Info.CPULog.Samples,
		100*float64(res.Info.CPULog.Last-res.Info.CPULog.First)/float64(res.Info.Duration()), truth)
	if math.Abs(float64(got-truth)) > float64(tol) {
		t.Errorf("CPU from the agent's log %v, /proc says %v around the trace: off by more than %v", got, truth, tol)
	}
	if rep.CPU.Independent == nil {
		t.Errorf("no independent CPU per request in the report")
	}
}

//go:noinline
func spin(_ context.Context, d time.Duration) {
	var sum [32]byte
	for start := time.Now(); time.Since(start) < d; {
		sum = sha256.Sum256(sum[:])
	}
}

// procCPU reads this process's utime+stime from /proc.
func procCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	hz, _ := hostsig.UserHZ()
	st, err := hostsig.ParseProcStat(b, hz)
	return st.CPU(), err
}
