package agent

import (
	"bytes"
	"context"
	"runtime/debug"
	"runtime/trace"
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/agent/internal/tier"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/tracelog"
)

// TestMainModule: a test binary has its package's module as its main
// module (Go sets Main.Path for test binaries).
func TestMainModule(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	t.Logf("ReadBuildInfo: ok=%v Main.Path=%q Main.Version=%q", ok, bi.Main.Path, bi.Main.Version)
	if got := mainModule(); got != "github.com/latscope/latscope/agent" {
		t.Errorf("mainModule() = %q, want the agent's module", got)
	}
}

// TestModuleDue: on a ticker of any interval, the module logs are
// ModuleEvery apart when the interval divides it and never further apart
// than ModuleEvery + interval/2 (well within the analysers' lookahead),
// even when ticks come a little early.
func TestModuleDue(t *testing.T) {
	for _, tt := range []struct {
		interval, want time.Duration
	}{
		{100 * time.Millisecond, 500 * time.Millisecond},
		{250 * time.Millisecond, 500 * time.Millisecond},
		{300 * time.Millisecond, 600 * time.Millisecond},
		{400 * time.Millisecond, 400 * time.Millisecond},
		{500 * time.Millisecond, 500 * time.Millisecond},
		{2 * time.Second, 500 * time.Millisecond}, // the second ticker, every ModuleEvery
	} {
		tick := min(tt.interval, tracelog.ModuleEvery)
		due := moduleDue(tt.interval)
		for _, jitter := range []time.Duration{-time.Millisecond, 0, time.Millisecond} {
			var last, gap time.Duration
			for i := 1; i <= 20; i++ {
				now := time.Duration(i)*tick + jitter*time.Duration(i%2)
				if now-last >= due {
					gap = max(gap, now-last)
					last = now
				}
			}
			if gap > tt.want+2*time.Millisecond || gap < tt.want-2*time.Millisecond {
				t.Errorf("interval %v, jitter %v: module logs up to %v apart, want %v", tt.interval, jitter, gap, tt.want)
			}
			if gap > tracelog.ModuleLookahead {
				t.Errorf("interval %v: logs %v apart, more than the analysers look ahead (%v)", tt.interval, gap, tracelog.ModuleLookahead)
			}
		}
	}
}

// closedMark is logged by the tests once the agent is closed.
const closedMark = "test.closed"

// traceAgent traces a real agent for run, closes it, traces on for a
// while more with closedMark logged at the close, and returns the trace's
// events.
func traceAgent(t *testing.T, o Options, run time.Duration) []agenttest.Event {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("SKIP: cannot trace this test binary (another trace is running?): %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			trace.Stop()
		}
	}()
	o.Dir = t.TempDir()
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(run)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	trace.Log(context.Background(), closedMark, "")
	time.Sleep(tracelog.ModuleEvery + 200*time.Millisecond)
	trace.Stop()
	stopped = true
	return traceEvents(t, t.Name(), &buf)
}

// checkModuleLogs checks that evs hold at least min module logs of want,
// outside any task, none further apart than the analysers look ahead, the
// first near the agent's start, and none after closedMark.
func checkModuleLogs(t *testing.T, evs []agenttest.Event, want string, least int) []agenttest.Event {
	t.Helper()
	var mods []agenttest.Event
	closed := false
	for _, ev := range evs {
		if ev.Kind != agenttest.KindLog {
			continue
		}
		switch ev.Name {
		case closedMark:
			closed = true
		case tracelog.Module:
			if closed {
				t.Errorf("module log %q after Close", ev.Message)
			}
			mods = append(mods, ev)
		}
	}
	if !closed {
		t.Fatalf("no %s log in the trace", closedMark)
	}
	if len(mods) < least {
		t.Fatalf("%d module logs, want at least %d", len(mods), least)
	}
	for i, ev := range mods {
		if ev.Message != want || ev.Task != agenttest.BackgroundTask {
			t.Errorf("log %d: %q in task %d, want %q outside any task", i, ev.Message, ev.Task, want)
		}
		if i > 0 {
			if gap := time.Duration(ev.Time - mods[i-1].Time); gap > tracelog.ModuleEvery*3/2 {
				t.Errorf("logs %d and %d are %v apart, want about %v", i-1, i, gap, tracelog.ModuleEvery)
			}
		}
	}
	return mods
}

// TestAgentModuleLog runs real agents under a real trace: the module is
// logged at the start and then every ModuleEvery, outside any task, and
// no more after Close.
func TestAgentModuleLog(t *testing.T) {
	tier.Timing(t)
	const run = 1200 * time.Millisecond // logs at about 0, 500 and 1000 ms
	t.Run("default module", func(t *testing.T) {
		evs := traceAgent(t, Options{}, run)
		checkModuleLogs(t, evs, "github.com/latscope/latscope/agent", 3)
	})
	t.Run("Options.Module", func(t *testing.T) {
		evs := traceAgent(t, Options{Module: "example.com/svc"}, run)
		checkModuleLogs(t, evs, "example.com/svc", 3)
	})
	t.Run("slow host samples", func(t *testing.T) {
		// Host samples every 2 s: the module keeps its own 500 ms ticker.
		evs := traceAgent(t, Options{Module: "example.com/svc", SampleInterval: 2 * time.Second}, run)
		checkModuleLogs(t, evs, "example.com/svc", 3)
		if n := len(logs(evs, tracelog.CPU)); n != 1 {
			t.Errorf("%d CPU counter logs, want 1 (at the start)", n)
		}
	})
	t.Run("no recorder", func(t *testing.T) {
		// The service traces itself: the agent still names the module.
		evs := traceAgent(t, Options{Module: "example.com/svc", NoRecorder: true}, run)
		checkModuleLogs(t, evs, "example.com/svc", 3)
		if n := len(logs(evs, hostsig.LogCategory)); n != 0 {
			t.Errorf("%d host samples without the recorder, want none", n)
		}
	})
}

// TestModuleLogInSnapshot: a flight-recorder snapshot holds the module
// logs, the first within the analysers' lookahead of the window's start.
func TestModuleLogInSnapshot(t *testing.T) {
	tier.Timing(t)
	a, err := New(Options{Dir: t.TempDir(), Module: "example.com/svc"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	time.Sleep(1100 * time.Millisecond)
	path, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	evs := traceFileEvents(t, path)
	mods := logs(evs, tracelog.Module)
	if len(mods) < 2 {
		t.Fatalf("%d module logs in the snapshot, want at least 2", len(mods))
	}
	if lead := time.Duration(mods[0].Time - evs[0].Time); lead > tracelog.ModuleLookahead {
		t.Errorf("first module log %v into the window, want within %v", lead, tracelog.ModuleLookahead)
	}
	for _, ev := range mods {
		if ev.Message != "example.com/svc" || ev.Task != agenttest.BackgroundTask {
			t.Errorf("module log %q in task %d", ev.Message, ev.Task)
		}
	}
}

// BenchmarkModuleTick is the cost of one module log while a trace is on,
// paid every ModuleEvery.
func BenchmarkModuleTick(b *testing.B) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		b.Skip(err)
	}
	defer trace.Stop()
	s := &sampler{module: "github.com/acme/svc"}
	b.ReportAllocs()
	for b.Loop() {
		s.moduleTick()
	}
}

// BenchmarkModuleTickOff is its cost when no trace is on.
func BenchmarkModuleTickOff(b *testing.B) {
	s := &sampler{module: "github.com/acme/svc"}
	b.ReportAllocs()
	for b.Loop() {
		s.moduleTick()
	}
}
