// Package probe is the CPU-availability probe that latscope's agent and the
// lab's services run beside the flight recorder (tracelog.Probe).
package probe

import (
	"context"
	"runtime/trace"
	"time"

	"github.com/latscope/latscope/tracelog"
)

// Run is the CPU-availability probe: it sleeps every at a time and, while
// a trace is on, logs under tracelog.Probe each wake-up more than late after
// its deadline (the process could not run for that long: throttled,
// stopped, its CPUs stolen or busy), and a heartbeat at its start and
// every tracelog.ModuleEvery. It runs until ctx is done.
func Run(ctx context.Context, every, late time.Duration) { RunFunc(ctx, every, late, nil) }

// RunFunc is Run that also calls onWake, when not nil, after each wake-up
// with its lateness: the time from the deadline to when the probe's
// goroutine got to run (a few microseconds when the process could run on
// time). onWake runs on the probe's goroutine, whether a trace is on or
// not; it must be quick, for the next deadline waits for it.
func RunFunc(ctx context.Context, every, late time.Duration, onWake func(lateness time.Duration)) {
	t := time.NewTimer(every)
	defer t.Stop()
	bg := context.Background()
	deadline := time.Now().Add(every)
	var beat time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now() // when this goroutine got to run, not when the timer fired
		d := max(now.Sub(deadline), 0)
		if trace.IsEnabled() {
			if now.Sub(beat) >= tracelog.ModuleEvery {
				trace.Log(bg, tracelog.Probe, tracelog.FormatProbeOn(every, late))
				beat = now
			}
			if d > late {
				trace.Log(bg, tracelog.Probe, tracelog.FormatProbeLate(d))
			}
		}
		if onWake != nil {
			onWake(d)
		}
		deadline = now.Add(every)
		t.Reset(every)
	}
}
