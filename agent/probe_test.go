package agent

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"runtime/trace"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/tier"
	"github.com/latscope/latscope/internal/hostsig/probe"
	"github.com/latscope/latscope/tracelog"
)

// TestProbe: with one P held by a goroutine that computes without blocking
// for 100 ms, the probe cannot run on time; it logs late wake-ups of about
// the preemption slice (10 ms), and its heartbeat says it runs.
func TestProbe(t *testing.T) {
	tier.Timing(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	a, err := New(Options{Dir: t.TempDir(), ProbeEvery: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("SKIP: cannot trace this test binary (another trace is running?): %v", err)
	}
	time.Sleep(30 * time.Millisecond) // the heartbeat
	burn(100 * time.Millisecond)
	time.Sleep(20 * time.Millisecond) // the probe's log after the burn
	trace.Stop()
	var beats int
	var worst time.Duration
	for _, ev := range logs(traceEvents(t, "probe", &buf), tracelog.Probe) {
		m, err := tracelog.ParseProbe(ev.Message)
		if err != nil {
			t.Fatal(err)
		}
		if m.On {
			beats++
		} else {
			worst = max(worst, m.Late)
		}
	}
	t.Logf("%d heartbeats, latest wake-up %v late", beats, worst)
	if beats == 0 {
		t.Errorf("no heartbeat: a window without late logs would not show the probe ran")
	}
	if worst < 5*time.Millisecond {
		t.Errorf("latest wake-up %v late while the only P computed for 100 ms; want at least 5 ms", worst)
	}
}

// BenchmarkProbeCost measures what the probe costs the process at its
// default period, against the same process without it in the same loop:
// each iteration runs 200 ms without the probe and 200 ms with it, under a
// trace (as with the flight recorder), and reads the process CPU
// (getrusage) around each. It reports the extra CPU as a share of one core.
func BenchmarkProbeCost(b *testing.B) {
	if err := trace.Start(io.Discard); err != nil {
		b.Skipf("SKIP: cannot trace: %v", err)
	}
	defer trace.Stop()
	const span = 200 * time.Millisecond
	var without, with time.Duration
	for b.Loop() {
		c0 := processCPU()
		time.Sleep(span)
		c1 := processCPU()
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); probe.Run(ctx, tracelog.ProbeEvery, tracelog.ProbeLate) }()
		time.Sleep(span)
		stop()
		<-done
		without, with = without+c1-c0, with+processCPU()-c1
	}
	b.ReportMetric(100*float64(with-without)/float64(time.Duration(b.N)*span), "%core")
}

// processCPU is this process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
