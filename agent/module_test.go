package agent

import (
	"bytes"
	"runtime/trace"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tracelog"
)

// TestModuleLog: the sampler logs the main module outside any task, at
// most every tracelog.ModuleEvery, so a window of the trace holds one in
// its first tracelog.ModuleLookahead.
func TestModuleLog(t *testing.T) {
	if mainModule() != "github.com/latscope/latscope" {
		t.Errorf("mainModule() = %q, want this repository's module", mainModule())
	}
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("SKIP: cannot trace this test binary (another trace is running?): %v", err)
	}
	s := &sampler{module: "example.com/svc"}
	start := time.Now()
	for time.Since(start) < 3*tracelog.ModuleEvery {
		s.log() // as the sampler's loop does, here every 100 ms
		time.Sleep(100 * time.Millisecond)
	}
	trace.Stop()
	mods := logs(traceEvents(t, t.Name(), &buf), ModuleLogCategory)
	if n := len(mods); n < 3 || n > 4 {
		t.Fatalf("%d module logs in %v, want one every %v", n, 3*tracelog.ModuleEvery, tracelog.ModuleEvery)
	}
	for i, ev := range mods {
		if ev.Message != "example.com/svc" || ev.Task != 0 {
			t.Errorf("log %d: %q in task %d, want the module outside any task", i, ev.Message, ev.Task)
		}
		if i > 0 && time.Duration(ev.Time-mods[i-1].Time) > tracelog.ModuleLookahead {
			t.Errorf("logs %d and %d are %v apart, more than the analysers look ahead", i-1, i, time.Duration(ev.Time-mods[i-1].Time))
		}
	}
}
