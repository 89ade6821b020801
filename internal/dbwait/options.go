package dbwait

import (
	"time"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/tracelog"
)

// SQLLogCategory is the trace.Log category under which an application logs
// a statement's traceparent inside the statement's region (package agent's
// convention).
const SQLLogCategory = tracelog.SQL

// SQLEndLogCategory is the category of the log that ends a statement whose
// region only marks its start: "traceparent=… duration_ns=N", written
// where the query ended (package agent's pgx tracer; pgx ends a query in
// Rows.Close, possibly on another goroutine).
const SQLEndLogCategory = tracelog.SQLEnd

// Options configures an Analyzer. Zero fields take the value in
// DefaultOptions.
type Options struct {
	// Threshold splits differences: up to it the time was inside the
	// database, above it outside (docs/method.md §8: 10 ms).
	Threshold time.Duration
	// MinPause is the shortest event-free stretch the "paused" rule
	// accepts. The default, 150 ms, is 1.5 sampling intervals of an
	// in-process host sampler at hostsig.DefaultInterval: such a sampler
	// logs into the trace every 100 ms, so a longer silence means even its
	// timer did not run. Shorter pauses of an idle process look like
	// network waits — unless the agent's CPU-availability probe is in the
	// trace: it wakes every 20 ms, so when it was late for half the
	// outside time, a silence of ProbePauses periods (40 ms) is the
	// process unable to run. A shorter one is no pause: the probe's own
	// sleep and a wake-up late by a loaded run queue make silences that
	// long (12–16 ms silences under load were called paused before).
	// With the probe, the bound is the smaller of the two.
	MinPause time.Duration
	// ClockTolerance is how far a statement may stick out of its span
	// before the clocks are taken to disagree (PostgreSQL timestamps are
	// truncated to the millisecond).
	ClockTolerance time.Duration
	// PGClockOffset is how far the database host's clock is ahead of the
	// traced process's; it is subtracted from PostgreSQL timestamps.
	PGClockOffset time.Duration
	// RegionNames are region types that are DB spans even without a
	// traceparent log; they are reported as unjoinable.
	RegionNames []string
	// SQLCategory, SQLEndCategory and HostCategory are the trace.Log
	// categories of traceparents, of statement ends and of host samples.
	SQLCategory, SQLEndCategory, HostCategory string
	// NoTraceSamples ignores the host samples logged in the trace, for
	// when samples come from elsewhere (Analyzer.Sample).
	NoTraceSamples bool
	// PID selects the host samples of one process when samples of several
	// are given; 0 = the PID of the first sample.
	PID int
}

// DefaultOptions are the values of zero Options fields.
var DefaultOptions = Options{
	Threshold:      10 * time.Millisecond,
	MinPause:       150 * time.Millisecond,
	ClockTolerance: 5 * time.Millisecond,
	RegionNames:    []string{"sql", "db"},
	SQLCategory:    SQLLogCategory,
	SQLEndCategory: SQLEndLogCategory,
	HostCategory:   hostsig.LogCategory,
}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.Threshold <= 0 {
		o.Threshold = d.Threshold
	}
	if o.MinPause <= 0 {
		o.MinPause = d.MinPause
	}
	if o.ClockTolerance <= 0 {
		o.ClockTolerance = d.ClockTolerance
	}
	if o.RegionNames == nil {
		o.RegionNames = d.RegionNames
	}
	if o.SQLCategory == "" {
		o.SQLCategory = d.SQLCategory
	}
	if o.SQLEndCategory == "" {
		o.SQLEndCategory = d.SQLEndCategory
	}
	if o.HostCategory == "" {
		o.HostCategory = d.HostCategory
	}
	return o
}
