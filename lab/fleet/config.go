package fleet

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/opterr"
)

// Config shapes a fleet run. Lengths are in "minutes" of Minute each:
// the analysis step that triage is run with.
type Config struct {
	// Minute is the compressed minute: triage's Step, and the unit of
	// every length below.
	Minute time.Duration
	// Warmup is how many minutes the load runs before the first phase.
	Warmup int
	// Period is the minutes between two bursts of the throttling phase,
	// and Bursts their number; the phase lasts ThrottleMinutes. Triage
	// claims a period only when its test rejects one continuous fault at
	// α 0.01 (docs/triage.md), which 3 or 4 bursts cannot do: placed at
	// random in the span of the bursts, the runs fall as evenly 1 time in
	// 5 (3 bursts every 4 minutes) or in 55 (4 every 5); 6 bursts every 4
	// minutes do it 1 time in 1,001.
	Period, Bursts int
	// PhaseMinutes is the length of the lock, stop and no-fault phases;
	// the faults leave two good minutes before and after them, so that
	// triage has baselines.
	PhaseMinutes int
	// Gap is the minutes of no fault between two phases (not analysed).
	Gap int
	// Threshold is triage's DB-call p95 threshold, RequestThreshold its
	// request p99 threshold (the stop phase's signal: a stopped process
	// delays the requests that wait to be served, but only the few DB calls
	// that were in flight).
	Threshold, RequestThreshold time.Duration
	// Quota is the CPUs of the throttled instance during its phase, and
	// BurstGoroutines the goroutines its bursts spin.
	Quota           float64
	BurstGoroutines int
	// DBClients and NoDBClients are closed-model clients per instance on
	// RouteDB and RouteNoDB, each pausing Think between requests: many
	// clients that think, so that a stall holds many requests at once, as
	// users arriving on their own would.
	DBClients, NoDBClients int
	// QuoteClients are closed-model clients per instance on RouteQuote
	// (0: none; the instances then need an upstream).
	QuoteClients int
	Think        time.Duration
	// Pool is each instance's connections to the database.
	Pool int
	// Phases are the phases to run, in the order of AllPhases (nil: all).
	Phases []string
	// UpstreamClients and ThinClients are the closed-model clients per
	// instance on RouteQuote during the upstream phase and the thin phase
	// (the only load on that route). UpstreamDelay is the upstream's answer
	// time, SlowUpstream its time while slowed in those phases.
	UpstreamClients, ThinClients int
	UpstreamDelay, SlowUpstream  time.Duration
	// AllocGoroutines are the goroutines allocating in the GC phase.
	AllocGoroutines int
	// Hold keeps Prometheus and the instances up this long after the last
	// phase (the load stopped), so that triage can be run on the phases by
	// hand; 0 stops at once.
	Hold time.Duration
}

// DefaultConfig is `latscope-lab fleet`: a 3 s minute, 6 bursts every 5
// minutes, the eight phases of AllPhases, about 6 minutes of wall time.
var DefaultConfig = Config{
	Minute: 3 * time.Second, Warmup: 3, Period: 5, Bursts: 6, PhaseMinutes: 8, Gap: 2,
	Threshold: 30 * time.Millisecond, RequestThreshold: 300 * time.Millisecond, Quota: 0.3, BurstGoroutines: 3,
	DBClients: 20, NoDBClients: 20, Think: 200 * time.Millisecond, Pool: 8,
	Phases: AllPhases, UpstreamClients: 20, ThinClients: 2, UpstreamDelay: 5 * time.Millisecond, SlowUpstream: 400 * time.Millisecond,
	AllocGoroutines: 2,
}

// ShortConfig is `latscope-lab fleet --short`: 6 bursts every 4 minutes,
// shorter phases, about 2 minutes of wall time.
var ShortConfig = DefaultConfig.Shorter()

// Shorter is c with the lengths of ShortConfig: a warm-up of 1 minute
// (the throttling phase's first minute, without a burst, settles the load
// as well), 6 bursts every 4 minutes, phases of 7 minutes and gaps of 1,
// and the four phases of ShortPhases only: the phases of issue #35 add
// some 40 minutes (two of them 16 long), which CI does not pay for.
func (c Config) Shorter() Config {
	c.Warmup, c.Period, c.Bursts, c.PhaseMinutes, c.Gap = 1, 4, 6, 7, 1
	c.Phases = ShortPhases
	return c
}

// LongPhaseMinutes is the length of the continuous and GC phases: 8
// minutes more than PhaseMinutes. The continuous fault lasts 4 minutes
// more than the others so that its bad steps make runs for rule 4's test
// to reject (the recorded hovering lock held 12 minutes); the GC phase
// needs quiet minutes before its fault, since the runtime updates its CPU
// classes only when a collection ends and the baseline of the collector's
// share needs 3 good steps with one (at the lab's load an instance
// collects about every 3–4 s).
func (c Config) LongPhaseMinutes() int { return c.PhaseMinutes + 8 }

// phaseMinutes is the length of phase name.
func (c Config) phaseMinutes(name string) int {
	switch name {
	case PhaseThrottle:
		return c.ThrottleMinutes()
	case PhaseContinuous, PhaseGC:
		return c.LongPhaseMinutes()
	}
	return c.PhaseMinutes
}

// phases is c.Phases, or AllPhases when it is nil.
func (c Config) phases() []string {
	if c.Phases == nil {
		return AllPhases
	}
	return c.Phases
}

// needsUpstream says whether a phase of c calls the upstream.
func (c Config) needsUpstream() bool {
	for _, p := range c.phases() {
		if p == PhaseUpstream || p == PhaseThin {
			return true
		}
	}
	return false
}

// ThrottleMinutes is the length of the throttling phase: a minute
// without a burst, then a burst at minute 1, 1+Period, …, and the phase
// ends after the last burst's minute.
func (c Config) ThrottleMinutes() int { return 1 + (c.Bursts-1)*c.Period + 1 }

// BurstLength is how long each burst runs, from a tenth into its minute:
// half a minute. (A step's calls are those scraped in it, up to 1 s
// before its end, so with a 2 s minute the burst's last slow calls fall
// in the next step when Prometheus scrapes the instance in the first
// 0.2 s of each second: a run of two bad steps, which triage's period
// test takes as it comes. Bursts short enough to avoid that — 0.6 s —
// missed one minute in six: the DB-call p95 stayed at 6 ms although the
// cgroup was throttled 0.45 s.)
func (c Config) BurstLength() time.Duration { return c.minutes(0.5) }

// MinMinute is the shortest minute: two scrapes of the 1 s scrape interval.
const MinMinute = 2 * time.Second

// Check validates a configuration; errors name the flag.
func (c Config) Check() error {
	switch {
	case c.Minute < MinMinute || c.Minute%time.Second != 0:
		return opterr.Wrap("minute", fmt.Errorf("%v: want whole seconds, at least %v (two scrapes of Prometheus's 1 s interval)", c.Minute, MinMinute))
	case c.Threshold <= 0:
		return opterr.Wrap("threshold", fmt.Errorf("%v: want a positive duration", c.Threshold))
	case c.RequestThreshold <= 0:
		return opterr.Wrap("request-threshold", fmt.Errorf("%v: want a positive duration", c.RequestThreshold))
	case c.Period < 2 || c.Bursts < 2:
		return errors.New("fleet: want a period of at least 2 minutes and at least 2 bursts")
	case c.PhaseMinutes < 6 || c.Gap < 1 || c.Warmup < 1:
		return errors.New("fleet: want phases of at least 6 minutes (3 good ones for triage's baselines), gaps and warm-up of at least 1")
	case c.Quota <= 0 || c.BurstGoroutines < 1:
		return errors.New("fleet: want a positive quota and at least one burst goroutine")
	case c.Hold < 0:
		return opterr.Wrap("hold", fmt.Errorf("%v: want a duration >= 0", c.Hold))
	case c.DBClients < 1 || c.NoDBClients < 1 || c.Pool < 1:
		return errors.New("fleet: want at least one client per route and one connection")
	}
	return c.checkPhases()
}

// checkPhases validates the phases and what they need.
func (c Config) checkPhases() error {
	seen := map[string]bool{}
	for _, p := range c.phases() {
		if !slices.Contains(AllPhases, p) {
			return fmt.Errorf("fleet: unknown phase %q (want some of %s)", p, strings.Join(AllPhases, ", "))
		}
		if seen[p] {
			return fmt.Errorf("fleet: phase %q twice", p)
		}
		seen[p] = true
	}
	switch {
	case len(c.phases()) == 0:
		return errors.New("fleet: want at least one phase")
	case c.needsUpstream() && (c.UpstreamClients < 1 || c.ThinClients < 1 || c.UpstreamDelay < 0 || c.SlowUpstream <= c.UpstreamDelay):
		return errors.New("fleet: the upstream and thin phases want clients on the route and an upstream slowed above its usual delay")
	case seen[PhaseGC] && c.AllocGoroutines < 1:
		return errors.New("fleet: the GC phase wants at least one allocating goroutine")
	}
	return nil
}

// minutes is n minutes of c.
func (c Config) minutes(n float64) time.Duration {
	return time.Duration(n * float64(c.Minute))
}

// Total is the planned wall time of the phases, gaps and warm-up (without
// start-up).
func (c Config) Total() time.Duration {
	n := c.Warmup + (len(c.phases())-1)*c.Gap
	for _, p := range c.phases() {
		n += c.phaseMinutes(p)
		if p == PhaseUpstream || p == PhaseThin {
			n++ // the route's load starts a minute before
		}
	}
	return c.minutes(float64(n))
}
