package triage

import (
	"time"
)

// HostSignal names one host counter of the agent, as seconds per step.
type HostSignal uint8

// The host signals, in the order the writers print them.
const (
	Throttled HostSignal = iota // latscope_cfs_throttled_seconds_total
	Stall                       // latscope_stall_seconds_total
	Steal                       // latscope_steal_seconds_total
	PSICgroup                   // latscope_cpu_pressure_some_seconds_total{scope="cgroup"}
	PSIHost                     // latscope_cpu_pressure_some_seconds_total{scope="host"}
	NumHostSignals
)

var hostSignalNames = [...]string{
	Throttled: "throttled",
	Stall:     "stall",
	Steal:     "steal",
	PSICgroup: "psi-cgroup",
	PSIHost:   "psi-host",
}

// String returns the signal's short name ("throttled", "stall", ...).
func (s HostSignal) String() string {
	if s < NumHostSignals {
		return hostSignalNames[s]
	}
	return "unknown"
}

// StepClass says how many instances were bad in one bad step.
type StepClass uint8

// The step classes.
const (
	Alone   StepClass = iota // only one instance had data: nothing to compare
	Local                    // exactly one of several (or of two) instances was bad
	Partial                  // more than one, fewer than half of the instances with data
	Shared                   // more than one, and at least half of the instances with data
)

var stepClassNames = [...]string{Alone: "alone", Local: "local", Partial: "partial", Shared: "shared"}

// String returns the class's name.
func (c StepClass) String() string {
	if int(c) < len(stepClassNames) {
		return stepClassNames[c]
	}
	return "unknown"
}

// Input is what the rules read: per instance, one value per step. A value
// is NaN where the series had no data at that step; a nil slice is a
// series that is absent altogether. Step i covers the time
// [Start+i·Step, Start+(i+1)·Step).
type Input struct {
	Start     time.Time
	Step      time.Duration
	Steps     int
	Instances []InstanceSeries
	// Buckets are the histogram's bucket upper bounds in seconds (nil:
	// DefaultBuckets).
	Buckets []float64
	// Quantile is the signal's percentile, as a quantile (0: the
	// signal's own, 0.95 for DB calls and 0.99 for requests; Run lowers it
	// when too few observations per step support it).
	Quantile float64
}

// InstanceSeries are one instance's series.
type InstanceSeries struct {
	Name string
	// Signal is the DB-call p95 (or request p99) in seconds.
	Signal []float64
	// NoDB95 and NoDB99 are the p95 and p99 of requests without DB calls,
	// in seconds.
	NoDB95, NoDB99 []float64
	// Host are the host counters' increases per step, in seconds.
	Host [NumHostSignals][]float64
	// Stalls is the number of the stall probe's late wake-ups per step
	// (latscope_stalls_total), and Requests the number of requests the
	// agent timed per step; nil when absent.
	Stalls, Requests []float64
	// Counts are the observations per step of the signal's histogram (DB
	// calls, or requests), NoDBCount the requests without DB calls: what
	// each step's percentile rests on (nil: unknown, every step counts).
	Counts, NoDBCount []float64
	// Over are the signal's observations per step over the threshold (over
	// the first bucket bound at or above it; nil: unknown).
	Over []float64
	// DBCall is the DB-call percentile per step (the signal itself with
	// the DB signal; with the request signal the p95, or the signal's
	// percentile when it is lower: depQuantile), and DBCalls the DB calls
	// per step (nil: absent).
	DBCall, DBCalls []float64
	// Outbound are the outbound time of the instance's requests, one
	// series per route (and peer, where the metric is labelled with one):
	// latscope_request_outbound_seconds.
	Outbound []OutboundSeries
	// GCCPU and UserCPU are the CPU seconds per step the Go runtime
	// accounts to its garbage collector and to the program's goroutines
	// (latscope_go_gc_cpu_seconds_total, latscope_go_user_cpu_seconds_total;
	// nil: absent, an agent from before issue #35).
	GCCPU, UserCPU []float64
}

// OutboundSeries is one route's outbound time on one instance: per step,
// P is the percentile (depQuantile of Input.Quantile: the p95, or the
// signal's when it is lower) of the time its requests spent in outbound
// HTTP/gRPC calls (each request's calls summed), and Count the number of
// such requests.
type OutboundSeries struct {
	Route string
	// Peer is the peer label's value ("": the metric has none; the
	// agent's is labelled by route only).
	Peer     string
	P, Count []float64
}

// Params are the rules' parameters.
type Params struct {
	Threshold time.Duration
	Signal    string // "db" or "request"
}

// Report is the result of the rules: every number the writers print.
type Report struct {
	Job, Route string
	Start, End time.Time
	Step       time.Duration
	Threshold  time.Duration
	Signal     string
	Steps      int
	// Quantile is the signal's percentile (0.95: p95); Thin counts the
	// instance-steps that had a value but too few observations for it
	// (no value in the rules: neither bad nor good).
	Quantile float64
	Thin     int
	// MinStall is the shortest stall (seconds) of the process that makes a
	// held step or a hidden-stall warning: the threshold plus 1 − Quantile
	// of the step.
	MinStall float64
	// Queries are the PromQL queries Run sent, in order.
	Queries []string `json:"-"`

	// Instances hold each instance's bad steps and evidence, by name.
	Instances []InstanceReport
	// BadSteps are the steps in which at least one instance was bad.
	BadSteps []BadStep
	Scope    ScopeEvidence
	DBPath   DBPathEvidence
	// Dependency is rule 3's second half: which dependency slowed.
	Dependency DependencyEvidence
	// Unwatched is what the DB-call signal does not watch (nil with
	// --signal request).
	Unwatched *Unwatched
	When      WhenEvidence
	Verdict   Verdict
	// Warnings say which numbers the data cannot support, and why. A kind
	// of per-instance warning given for more than a few instances is one
	// line with the count and the first instances, and Prometheus's
	// warnings are listed once each, at most maxPromWarnings of them;
	// WarningsTotal counts the warnings before they were summed up.
	Warnings      []string
	WarningsTotal int

	groups [numWarnKinds]warnGroup // per-instance warnings, until Analyze ends
}

// InstanceReport is one instance's share of the report.
type InstanceReport struct {
	Name string
	// DataSteps is the number of steps with a signal value.
	DataSteps int
	// Bad are the indices of the steps in which the signal was over the
	// threshold, or which were held (below).
	Bad []int
	// Held are the bad steps in which the signal stayed under the
	// threshold but the process was held (request signal only): the stall
	// probe's late wake-ups averaged at least the threshold while requests
	// were served, so requests that arrived meanwhile waited that long
	// before their handlers, which the request histogram cannot see.
	Held []int
	// Peer are the bad steps in which the signal stayed under the
	// threshold but was far over the other instances' in the same step
	// (the peer rule, docs/triage.md rule 1).
	Peer []int
	// Thin counts the steps with too few observations for the percentile.
	Thin int
	// Baseline is the median signal of the good steps (NaN: fewer than 3);
	// Worst is the highest signal of the bad steps (NaN: none).
	Baseline, Worst float64
	// Signal is the signal per step, for the timeline (NaN: no data).
	Signal []float64
	// HostSteps are the host signals per step, seconds (NaN: no data; nil:
	// absent), and GCShare the collector's share of the process's CPU per
	// step (NaN: no collection in the step; nil: absent): what the HTML
	// plots beside the signal.
	HostSteps [NumHostSignals][]float64
	GCShare   []float64
	// DBPath is rule 3's evidence for this instance's bad steps.
	DBPath DBPathEvidence
	// Host is rule 5's evidence, one entry per signal.
	Host []HostEvidence
	// GC is rule 5's evidence of the process's own garbage collector.
	GC GCEvidence
	// Cause is rule 5's conclusion for this instance (when it had bad steps).
	Cause string
}

// GCEvidence is rule 5 for the Go runtime's garbage collector of one
// instance: its share of the process's CPU, gc / (gc + user), in the bad
// steps and in the good steps.
type GCEvidence struct {
	// Absent is set when either CPU series is missing (an agent from
	// before issue #35): GC cannot be told apart from other causes.
	Absent bool
	// Bad is the share over the bad steps (their GC CPU summed over their
	// GC and user CPU summed; NaN: no CPU counted); Good is the baseline,
	// the pooled share of the good steps not GC-elevated over the peers
	// (NaN: none), and GoodSD the robust standard deviation (1.4826 × MAD)
	// of their per-step shares. With fewer than 3 such steps with a
	// collection, or GC-heavy throughout, Peers is set and both come from
	// the other instances in the same bad steps. The runtime counts the CPU
	// at the end of each collection only: a step without one has no share.
	Bad, Good, GoodSD float64
	// Elevated counts the steps with a collection in which the collector's
	// CPU was far over the other instances' (rule 1's peer test) and its
	// share 10 points over theirs, of Collected steps with a collection;
	// Throughout is set when that is at least three quarters of them.
	// LeftOut counts the good steps among the elevated ones: those the
	// baseline leaves out.
	Elevated, Collected, LeftOut int
	Throughout, Peers            bool
	// BadCPU and GoodCPU are the collector's mean CPU seconds per step.
	BadCPU, GoodCPU float64
	// Rose is set when Bad − Good is at least GCShareRise and at least
	// RoseSDs times GoodSD.
	Rose bool
}

// BadStep is one step in which at least one instance was bad.
type BadStep struct {
	Index int
	Time  time.Time // the start of the step
	// Bad names the instances over the threshold; WithData counts the
	// instances with a signal value in this step.
	Bad      []string
	WithData int
	Class    StepClass
}

// ScopeEvidence is rule 2's count of bad steps by class.
type ScopeEvidence struct {
	Alone, Local, Partial, Shared int
	// LocalBy counts the local steps per instance name.
	LocalBy map[string]int
}

// DBPathEvidence is rule 3: in the bad steps, did requests without DB
// calls slow down too?
type DBPathEvidence struct {
	// Verdict is "db-only", "all-requests" or "unknown".
	Verdict string
	// Compared is the number of bad steps with a value of both; Rose of
	// them had the no-DB p95 or p99 over its baseline by at least half of
	// the signal's own rise.
	Compared, Rose int
	// Held counts the compared steps that were held (a stall of the whole
	// process): they count as rose, since every request waited.
	Held int
	// Baseline95 and Baseline99 are the medians over the good steps of the
	// no-DB p95 and p99 (NaN: none); BadMedian95/99 the medians over the
	// compared bad steps.
	Baseline95, Baseline99, BadMedian95, BadMedian99 float64
	// Reason says why the verdict is unknown.
	Reason string
}

// WhenEvidence is rule 4: when the bad steps happen.
type WhenEvidence struct {
	// ByMinute and ByHour count the bad steps by the minute of the hour and
	// the hour of the day (UTC) of the step's start.
	ByMinute [60]int
	ByHour   [24]int
	// Clusters is the number of runs of consecutive bad steps.
	Clusters int
	// Period is 0 when none was found; PeriodSteps is Period in steps.
	Period      time.Duration
	PeriodSteps int
	// Phase is the start of the first step on the period's phase; Hits is
	// the number of periods (Slots in the range) that held a cluster
	// start there, OnPhase the number of clusters that started there.
	Phase                time.Time
	Hits, Slots, OnPhase int
	// Last is the start of the last cluster and LastEnd its end; Next is
	// the next occurrence after the range (zero without a period).
	Last, LastEnd, Next time.Time
	// PValue is the period test's p-value (docs/triage.md): of the period
	// found, or of the best candidate when none passed (NaN: no candidate
	// was tested); Alpha is the level a period needs; Draws the Monte Carlo
	// draws made. SpanFrom and SpanTo bound the continuous fault of the
	// test's null: from the first bad step's start to the last one's end.
	PValue           float64
	Alpha            float64
	Draws            int
	SpanFrom, SpanTo time.Time
	// Candidate is the period of the best candidate that did not pass (0:
	// none, or a period was found).
	Candidate time.Duration
	// Reason says why no period was found.
	Reason string
}

// HostEvidence is rule 5 for one host signal of one instance: seconds per
// step in the bad steps and in the good steps.
type HostEvidence struct {
	Signal HostSignal
	// Absent is set when the series is missing.
	Absent bool
	// Bad and Good are the mean seconds per step (NaN: no step); GoodSD
	// is the standard deviation of the good steps' values (NaN: fewer than
	// 3).
	Bad, Good, GoodSD float64
	// Rose is set when Bad − Good is at least the threshold (a call made
	// late by the threshold needs that much time the process could not
	// run) and at least RoseSDs standard deviations of the good steps (more
	// than the signal's own spread).
	Rose bool
}

// Verdict is rule 6.
type Verdict struct {
	// Scope is "none", "local", "shared" or "unknown" (one instance only).
	Scope string
	// Instance is the bad instance when Scope is "local".
	Instance string
	// DBPath is "db-only", "all-requests" or "unknown".
	DBPath string
	// Dependency is what slowed (rule 3): the database, an outbound
	// dependency (Route, and Peer where labelled), the host, or unknown.
	Dependency  Dependency
	Route, Peer string
	// Period is 0 when none was found.
	Period time.Duration
	// Cause is, for a local verdict, "throttled", "stalled", "steal",
	// "gc", "cpu-pressure" or "unknown".
	Cause string
	// Rule says which rules of rule 1 made the verdict's bad steps bad:
	// "threshold", "peer", "held", joined by "+" when several did.
	Rule string
	// Line is the verdict sentence, Next the next step.
	Line, Next string
}
