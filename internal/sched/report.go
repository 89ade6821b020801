package sched

import (
	"encoding/json"
	"time"

	"github.com/latscope/latscope/internal/units"
)

// Report is the outcome of an analysis.
type Report struct {
	// CPU divides the CPU samples: the profile's when one was added
	// (UseProfile), else the trace's. Samples is 0 when there were none.
	CPU CPU `json:"cpu"`
	// Trace holds what only a trace shows; nil for a profile alone.
	Trace      *TraceStats `json:"trace,omitempty"`
	Procs      Procs       `json:"procs"`
	Thresholds Thresholds  `json:"thresholds"`
}

// TraceStats is what the execution trace shows about scheduling.
type TraceStats struct {
	Duration time.Duration `json:"-"`        // first to last record (JSON: duration_ms)
	PsSeen   int           `json:"ps_seen"`  // Ps that ran
	Threads  int           `json:"threads"`  // OS threads that ran goroutines or Ps
	PStarts  int64         `json:"p_starts"` // a P started running (an M took it)
	PStops   int64         `json:"p_stops"`  // a P stopped (its M went idle or into a syscall)
	// Wakeups are Waiting → Runnable transitions, PollWakeups those without a
	// waker goroutine (network poller, timers); Creations are `go` statements.
	Wakeups     int64      `json:"wakeups"`
	PollWakeups int64      `json:"poll_wakeups"`
	Creations   int64      `json:"creations"`
	Bursts      BurstStats `json:"bursts"`
	// Causes are the top creators and wakers in large bursts.
	Causes []Cause `json:"causes"`
	// Wait is the runnable wait after each wakeup or creation.
	Wait WaitStats `json:"runnable_wait"`
}

// MarshalJSON writes Duration in milliseconds.
func (t *TraceStats) MarshalJSON() ([]byte, error) {
	type plain TraceStats
	return json.Marshal(struct {
		Duration float64 `json:"duration_ms"`
		*plain
	}{units.Ms(t.Duration), (*plain)(t)})
}

// PerSecond returns n per second of trace.
func (t *TraceStats) PerSecond(n int64) float64 {
	if t.Duration <= 0 {
		return 0
	}
	return float64(n) / t.Duration.Seconds()
}

// MarshalJSON adds the findings to the report's fields.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		*plain
		Findings []Finding `json:"findings"`
	}{(*plain)(r), r.Findings()})
}
