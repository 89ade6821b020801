package dbwait

import (
	"time"

	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/tracein"
)

// FaultSpan is when one fault was in force during a run. The times are
// milliseconds since the run's trace began (its first event), the x axis
// of the report's timeline; a fault applied before the window (a quota, a
// proxy) begins below zero, and one removed after it ends past the trace.
type FaultSpan struct {
	What   string  `json:"what"`
	FromMs float64 `json:"from_ms"`
	ToMs   float64 `json:"to_ms"`
	// from and to are this process's clock readings, converted in place
	// once the trace's start is known.
	from, to time.Time
}

// addFault records that a fault was in force from from to to (readings
// of time.Now in this process).
func (rr *RunResult) addFault(what string, from, to time.Time) {
	rr.Faults = append(rr.Faults, FaultSpan{What: what, from: from, to: to})
}

// placeFaults sets the faults' times relative to traceStart, a time on the
// service's trace clock. The trace clock is CLOCK_MONOTONIC, which is
// system-wide, so one reading of it next to time.Now converts this
// process's readings exactly (to a few µs). Without that clock the faults
// are dropped: a band in the wrong place would mislead.
func (rr *RunResult) placeFaults(traceStart tracein.Time) {
	if len(rr.Faults) == 0 {
		return
	}
	mono, err := hostsig.Monotonic()
	now := time.Now()
	if err != nil {
		rr.Warnings = append(rr.Warnings, "fault times not placed on the trace clock: "+err.Error())
		rr.Faults = nil
		return
	}
	at := func(t time.Time) float64 { return units.Ms(mono - now.Sub(t) - time.Duration(traceStart)) }
	for i := range rr.Faults {
		f := &rr.Faults[i]
		f.FromMs, f.ToMs = at(f.from), at(f.to)
	}
}
