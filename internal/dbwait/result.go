package dbwait

import (
	"time"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/tracein"
)

// Query is one app DB span and, when matched, its statement.
type Query struct {
	Region      string
	G           tracein.GoID
	Task        tracein.TaskID
	TraceParent pglog.TraceParent
	Start, End  tracein.Time  // the region, on the trace clock
	StartWall   time.Time     // Start on the wall clock; zero when the trace has no clock
	App         time.Duration // End − Start
	runnable    time.Duration
	// byPressure: Explain's verdict was runnable only by the cgroup's CPU
	// pressure pro-rated, where the probe saw the process run (pressureOnly)
	byPressure bool

	Matched  bool
	DB       time.Duration // the statement's server time (phases summed, lock waits included)
	DBStart  time.Time     // wall clock, corrected by Options.PGClockOffset; zero when the log has no times
	DBEnd    time.Time
	PID      int           // backend
	LockWait time.Duration // longest log_lock_waits report
	SQL      string

	Outside time.Duration // App − DB: time outside the database
	Verdict Verdict
	Rule    string // the rule that decided the verdict, with its numbers (Explain)
	// Confidence is how firmly the evidence supports the verdict.
	Confidence Confidence
	// Alternative is a verdict the evidence could not rule out (Inside
	// when none): db-cpu beside network without a recording of the
	// database host, on a host under CPU pressure (named in Rule).
	Alternative Verdict
	Evidence    Evidence
}

// Evidence is what a verdict was decided on.
type Evidence struct {
	// Host is the change of the host counters over the sampled interval
	// covering the span (from the last sample at or before Start to the
	// first at or after End); nil when no samples cover it.
	Host *hostsig.Delta
	// Gap is the longest stretch with no trace event from any goroutine or
	// P inside the outside time (the span minus the statement, or the whole
	// span when the statement cannot be placed), and GapStart where it
	// begins.
	Gap      time.Duration
	GapStart tracein.Time
	// TailGap is the part of the outside time in the event-free stretch
	// that ended as the answer was taken: the process did nothing then,
	// not even the probe's wake-ups, so the probe cannot say whether it
	// could run.
	TailGap time.Duration
	// Runnable is how long the span's goroutine was runnable but not
	// running inside the span: waiting for a P, or on a P whose thread had
	// no CPU.
	Runnable time.Duration
	// Placed tells whether the statement was placed in the span by the
	// clocks, so that Gap excludes the time inside the database.
	Placed bool
	// BeforeDB and AfterDB split the outside time of a placed statement:
	// from the span's start to the database's (the query's way in, and
	// the database host's time before its timer started) and from the
	// database's end to the span's (the answer's way back, and the
	// database host's time after its timer stopped). The database logs
	// its end to the millisecond, so each is known to about 1 ms.
	BeforeDB, AfterDB time.Duration
	// DBHostWait is, when DBHost is set, how long the statement's backend
	// waited on its host's run queue outside the database's timer, as
	// the recording places it (dbhost.Waits.Place: the waits that ended
	// before the timer started and after it stopped, to within the
	// recording's period), at most the outside time. A
	// statement that slept on a lock loses none of the wait before it
	// (the lock sleep is no run-queue wait). When the log has no
	// statement times to place against: the span's wait minus the
	// statement's duration, a lower bound. DBHost is set when a
	// recording of the database host (Analyzer.DBHost) covers the span
	// and its backend.
	DBHostWait time.Duration
	DBHost     bool
	// DBHostPressure is the database host's CPU pressure over the scrape
	// interval covering the span (Analyzer.DBHostPressure: its metrics,
	// not a recording of its backends); nil without them.
	DBHostPressure *PressureDelta
	// ProbeLate is how much of the outside time the agent's CPU-availability
	// probe woke late (the process could not run); Probe tells whether the
	// probe ran at all — without it ProbeLate says nothing.
	ProbeLate time.Duration
	Probe     bool
	// ProbeEvery is the probe's period, from its heartbeat (0 without
	// the probe).
	ProbeEvery time.Duration
	// ProbeUnsure is outside time the process may also have been unable
	// to run: a late wake-up says a stall ended then, not when it began
	// within the period before its deadline.
	ProbeUnsure time.Duration
	// ProbeTail is the part of ProbeLate in the stall that ended as the
	// span's answer was taken (the tail of the outside time, after the
	// statement), and ProbeTailUnsure its unsure part: the only stall that
	// can have delayed the answer. A stall that ended earlier overlapped a
	// wait for something else.
	ProbeTail, ProbeTailUnsure time.Duration
	// ProbeHead and ProbeHeadUnsure are the same for the stall that ended
	// as the query left (the outside time before the statement, when it
	// is placed): a process that could not run before it sent the query
	// delayed the statement's start.
	ProbeHead, ProbeHeadUnsure time.Duration
	// Busy is how much of the outside time every P of the process ran a
	// goroutine in the stretch that ended as the answer was taken: an
	// answer that arrived then waited for a P to poll the network, with
	// the goroutine still shown waiting. (A busy stretch that ended
	// earlier left a P free while the goroutine still waited.)
	Busy time.Duration
	// FloorStall is set when the trace has a network floor
	// (Result.NetworkFloor; without one, the usual statement's difference
	// when that is inside the database) and the statement waited longer
	// than the floor plus the threshold: how much of the wait past the
	// floor the probe's stalls explain. By the floor, the answer was due one floor after the
	// query left, so a stall in the rest of the outside time held an
	// answer already there (late parts plus, expected, half the period
	// before each deadline); and a stall longer than the floor cannot all
	// have overlapped the network wait, so its excess over the floor is
	// CPU time wherever it lay. The larger of the two; zero otherwise.
	FloorStall time.Duration
}

// VerdictSummary sums the matched queries of one verdict.
type VerdictSummary struct {
	Count                     int
	AppP50, DBP50, OutsideP50 time.Duration
	OutsideSum                time.Duration
}

// Summary counts and sums a Result.
type Summary struct {
	Spans         int // DB spans with a traceparent
	Matched       int // of those, joined with a statement
	NoTraceParent int // regions of a RegionNames type without a traceparent log
	// EndLogged counts spans that an end log (SQLEndCategory) ended: their
	// region only marked the start. EndWithoutSpan counts end logs whose
	// start was not in the trace.
	EndLogged, EndWithoutSpan int
	Statements                int // statements in the log(s)
	Uncommented               int // of those, without a traceparent comment
	Over                      int // matched with Outside > Threshold
	AppP50, DBP50             time.Duration
	OutsideP50                time.Duration
	OverP50                   time.Duration // median Outside of those over the threshold
	ByVerdict                 [NumVerdicts]VerdictSummary
	// NetworkOrDBCPU counts the network verdicts with db-cpu as their
	// alternative (Query.Alternative): "network or db-cpu".
	NetworkOrDBCPU int
}

// HostTotals is the change of the host counters over the whole trace.
type HostTotals struct {
	Samples  int           // samples used
	InTrace  bool          // they came from the trace's logs
	Interval time.Duration // median spacing
	Delta    *hostsig.Delta
}

// Result is the join and classification of one trace.
type Result struct {
	Options   Options
	Queries   []Query // matched spans, in start order
	Unmatched []Query // spans whose traceparent is not in the log
	Summary   Summary
	Host      HostTotals
	// TraceStart is the first event's time, TraceStartWall its wall clock
	// (zero without a clock).
	TraceStart     tracein.Time
	TraceStartWall time.Time
	// ClockOffset is the estimated (PostgreSQL − trace) clock difference
	// left after Options.PGClockOffset; near zero when the clocks agree.
	ClockOffset time.Duration
	// DBHost says what the database host's recording covered (nil
	// without one).
	DBHost *DBHostCoverage
	// DBHostPressure says what the database host's CPU pressure series
	// covered (nil without one).
	DBHostPressure *PressureCoverage
	// NetworkFloor is the trace's usual wait outside the database: the
	// median difference of the FloorStatements called network with high
	// confidence; 0 with fewer than 5 (docs/dbwait.md, "The network floor").
	NetworkFloor    time.Duration
	FloorStatements int
	Warnings        []error
}

// PressureCoverage is how much of a trace the database host's CPU
// pressure series (Analyzer.DBHostPressure) covered.
type PressureCoverage struct {
	// Source names the series; From and To are its first and last
	// samples' times, Samples their number.
	Source   string
	From, To time.Time
	Samples  int
	// Covered of Statements joined statements fell between two samples.
	Covered, Statements int
}

// DBHostCoverage is how much of a trace a recording of the database
// host's backends (Analyzer.DBHost) covered.
type DBHostCoverage struct {
	// From and To are the recording's first and last times; Backends the
	// number of backends it saw.
	From, To time.Time
	Backends int
	// Covered of Statements joined statements had the recording's evidence
	// (its time and their backend).
	Covered, Statements int
}
