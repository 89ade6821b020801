// Package tracelog is the contract between what latscope's agent (and the
// lab's services) write into an execution trace and what the analysers
// read from it: the log categories, the region names and the formats of
// the messages. Both sides import it; neither defines the names again.
package tracelog

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Log categories (trace.Log) and their messages.
const (
	// SQL: inside each query's region, the traceparent sent in the
	// statement's SQL comment ("00-<trace>-<span>-<flags>").
	SQL = "latscope.sql"
	// SQLEnd: where a query whose region could not span it ended (pgx ends
	// a query in Rows.Close, on any goroutine), in the query's task: an
	// SQLEndMsg.
	SQLEnd = "latscope.sql.end"
	// HTTP: inside each outbound call's region, the traceparent sent in its
	// traceparent header.
	HTTP = "latscope.http"
	// CPU: the process CPU time (utime+stime) in decimal seconds, outside
	// any task.
	CPU = "latscope.cpu"
	// Slow: inside a slow request's task, just before it ends, why it
	// triggered a snapshot (route, latency_ns, threshold_ns, traceparent).
	Slow = "latscope.slow"
	// Module: the service's main module path (runtime/debug.ReadBuildInfo),
	// outside any task, at start and then every ModuleEvery, so that every
	// window of a flight recorder holds one near its start. The analysers
	// take the application to be that module's code.
	Module = "latscope.module"
)

// ModuleEvery is how often the agent repeats its Module log; the analysers
// look for it in the trace's first ModuleLookahead.
const (
	ModuleEvery     = 500 * time.Millisecond
	ModuleLookahead = 2 * ModuleEvery
)

// Region names.
const (
	// SQLRegion is the region of one query: the whole query (database/sql),
	// or a mark where it began, its end logged under SQLEnd (pgx).
	SQLRegion = "sql"
	// HTTPRegionPrefix starts the region of one outbound call; the host
	// follows ("http upstream:8080").
	HTTPRegionPrefix = "http "
)

// SQLEndMsg is the message of an SQLEnd log: which query ended (the
// traceparent of its SQL log) and how long it took from its start.
type SQLEndMsg struct {
	TraceParent TraceParent
	Duration    time.Duration
}

// String formats e as a log message: "traceparent=00-… duration_ns=N".
func (e SQLEndMsg) String() string { return FormatSQLEnd(e.TraceParent.String(), e.Duration) }

// FormatSQLEnd formats an SQLEnd message from a traceparent's text, in one
// allocation.
func FormatSQLEnd(tp string, d time.Duration) string {
	var b strings.Builder
	b.Grow(len("traceparent= duration_ns=") + len(tp) + 20)
	b.WriteString("traceparent=")
	b.WriteString(tp)
	b.WriteString(" duration_ns=")
	var num [20]byte
	b.Write(strconv.AppendInt(num[:0], int64(d), 10))
	return b.String()
}

// ParseSQLEnd parses the message of an SQLEnd log.
func ParseSQLEnd(msg string) (SQLEndMsg, error) {
	var e SQLEndMsg
	tpText, durText, ok := strings.Cut(msg, " ")
	tpText, okTP := strings.CutPrefix(tpText, "traceparent=")
	durText, okDur := strings.CutPrefix(durText, "duration_ns=")
	if !ok || !okTP || !okDur {
		return e, fmt.Errorf("%s log %q: want \"traceparent=00-… duration_ns=N\"", SQLEnd, msg)
	}
	tp, err := ParseTraceParent(tpText)
	if err != nil {
		return e, fmt.Errorf("%s log %q: %w", SQLEnd, msg, err)
	}
	ns, err := strconv.ParseInt(durText, 10, 64)
	if err != nil || ns < 0 {
		return e, fmt.Errorf("%s log %q: duration_ns: want a non-negative integer", SQLEnd, msg)
	}
	return SQLEndMsg{TraceParent: tp, Duration: time.Duration(ns)}, nil
}

// FormatCPU formats a CPU time as the message of a CPU log: decimal
// seconds, as short as exact ("12.34").
func FormatCPU(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// ParseCPU parses the message of a CPU log.
func ParseCPU(msg string) (time.Duration, error) {
	f, err := strconv.ParseFloat(msg, 64)
	if err != nil || !(f >= 0 && f <= 1e9) { // also refuses NaN
		return 0, fmt.Errorf("%s log %q: want non-negative decimal seconds", CPU, msg)
	}
	return time.Duration(f*1e9 + 0.5), nil
}

// The CPU-availability probe: a goroutine of the agent sleeps ProbeEvery at
// a time, and when it wakes more than ProbeLate after its deadline it logs
// how late under Probe, outside any task (FormatProbeLate): the process
// could not run for that long — throttled, stopped, its CPUs stolen or
// busy. It logs FormatProbeOn when it starts and then every ModuleEvery, so
// that a window without late logs says the process could run on time.
const (
	Probe      = "latscope.probe"
	ProbeEvery = 20 * time.Millisecond
	ProbeLate  = 2 * time.Millisecond
)

// FormatProbeLate formats a late wake-up: "late_ns=N".
func FormatProbeLate(late time.Duration) string {
	return "late_ns=" + strconv.FormatInt(int64(late), 10)
}

// FormatProbeOn formats the probe's heartbeat: "on every_ns=N late_ns=N",
// its period and the lateness it reports from.
func FormatProbeOn(every, late time.Duration) string {
	return "on every_ns=" + strconv.FormatInt(int64(every), 10) + " late_ns=" + strconv.FormatInt(int64(late), 10)
}

// ProbeMsg is a parsed Probe log: a late wake-up (Late its lateness) or
// the heartbeat (On, with the probe's period Every and the lateness it
// reports from as Late).
type ProbeMsg struct {
	On          bool
	Every, Late time.Duration
}

// ParseProbe parses a Probe log.
func ParseProbe(msg string) (ProbeMsg, error) {
	var m ProbeMsg
	bad := fmt.Errorf("%s log %q: want \"late_ns=N\" or \"on every_ns=N late_ns=N\"", Probe, msg)
	rest, on := strings.CutPrefix(msg, "on every_ns=")
	if on {
		every, tail, _ := strings.Cut(rest, " ")
		n, err := strconv.ParseInt(every, 10, 64)
		if err != nil || n < 0 {
			return m, bad
		}
		m.On, m.Every, rest = true, time.Duration(n), tail
	}
	v, ok := strings.CutPrefix(rest, "late_ns=")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil || n < 0 {
		return ProbeMsg{}, bad
	}
	m.Late = time.Duration(n)
	return m, nil
}

// The runtime's execution tracer keeps at most MaxString bytes of any
// string it writes (internal/trace/tracev2.MaxEventTrailerDataSize): it
// cuts a longer log message there, wherever that falls in a character. A
// task or region name, and a log category, goes into the tracer's string
// table first, in blocks of 64 KiB: a name longer than 65,520 bytes
// (runtime.traceRegionAllocBlockData, aligned up to 8) kills the process
// with "fatal error: traceRegion: alloc too large". The agent therefore
// hands the tracer no string longer than MaxString: it cuts longer ones
// with Bound, on a character boundary, and marks them with CutMark.
const (
	MaxString = 1 << 10
	CutMark   = "…[cut]"
)

// Bound returns s when it is at most n bytes long; else the longest prefix
// of s that ends on a character boundary and, followed by CutMark, is at
// most n bytes, followed by CutMark (or, when n is shorter than CutMark,
// such a prefix of n bytes at most, unmarked). A short s is returned as it
// is, without a copy.
func Bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	mark := CutMark
	if n < len(mark) {
		mark = ""
	}
	cut := max(n-len(mark), 0)
	// Back up over at most UTFMax-1 continuation bytes: a valid character
	// is never split, and invalid bytes cost no more than that.
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	return s[:cut] + mark
}
