package dbwait

import (
	"fmt"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

// usualPath is the trace's usual wait outside the database, as Finalize
// takes it after the network floor: the floor when one stands, else the
// median difference of all statements when it is within the threshold
// (inside the database), else none (wait 0).
type usualPath struct {
	wait  time.Duration // 0: none
	n     int           // the statements it is the median of
	floor bool          // the network floor; else the median of all
}

// words names the usual wait and where it comes from.
func (u usualPath) words() string {
	if u.floor {
		return fmt.Sprintf("the trace's network floor of %s ms (median of the %d statements on time)", fmtMs(u.wait), u.n)
	}
	return fmt.Sprintf("the trace's usual difference of %s ms (median of all %d)", fmtMs(u.wait), u.n)
}

// pastUsual tells whether outside waited past the usual path for half of
// it or more: 2·(outside − usual) ≥ outside, the share every rule asks of
// its cause. Without a usual wait, always.
func (u usualPath) pastUsual(outside time.Duration) bool {
	return 2*(outside-u.wait) >= outside
}

// hedge qualifies a network verdict that no recording of the database
// host checked (issue 34): when this host was under CPU pressure over the
// sampled interval, a database on it may have kept the statement's
// backend waiting for a CPU before it read the query or after it sent
// the answer — outside the database's timer, while the application could
// run, which from here looks the same as the network. The verdict stays
// network (the application's side of the evidence holds) at confidence
// low, with db-cpu named as the alternative and the recording that
// decides it. Pressure is the machine's PSI some for half the sampled
// interval or more, else (without PSI) the process's own threads' run-
// queue wait for half of it: the share every rule asks of its cause. Both
// are this host's: they speak for the database only if it runs here,
// which the trace cannot tell; the words say so. A database host's
// recording (ev.DBHost) measures the backend instead, and dec stands.
// The database host's own CPU pressure series (ev.DBHostPressure: its
// metrics, e.g. node_exporter's PSI read from Prometheus) decides in
// place of this host's, wherever the database runs: under half the
// scrape interval covering the span, no hedge, and the rule says why; at
// half or more, the hedge, named after it. It is the host's pressure over
// seconds, not the backend's wait, so it can only hedge, never decide
// db-cpu.
//
// Only the wait past the trace's usual path (u) is hedged: the statement
// must have waited past it for half its difference or more. A path's
// wait (a proxy's delay, a far server's round trip) is the same for
// every statement, while a backend's wait for a CPU varies with its
// host's load: on a busy host the hedge without this test covered 140 of
// 144 statements of a 15 ms proxy, all at the floor. A database host so
// saturated that every statement waits alike looks like a path, and is
// not hedged; the rule then says the host was under pressure.
//
// It returns dec so qualified and the alternative (Inside, the zero
// value, when there is none: inside is never an alternative). Finalize
// applies it to every verdict after the network floor, which is taken
// from the network verdicts as the application's side decided them.
func hedge(dec Decision, ev Evidence, outside time.Duration, u usualPath) (Decision, Verdict) {
	if dec.Verdict != Network || ev.DBHost {
		return dec, Inside
	}
	what, dbHostOwn := "", false
	if p := ev.DBHostPressure; p != nil {
		// The database host's own pressure decides, wherever it runs.
		if !p.busy() {
			dec.Rule += fmt.Sprintf("; the database host's CPU pressure (%s) was under half the interval: its CPU did not keep the backend waiting that long", p.words())
			return dec, Inside
		}
		what, dbHostOwn = "the database host's CPU pressure ("+p.words()+")", true
	} else {
		d := ev.Host
		switch {
		case d == nil:
			return dec, Inside
		case d.Has(hostsig.SourceSystemPSI):
			if 2*d.SystemSome < d.Interval {
				return dec, Inside
			}
			what = fmt.Sprintf("this host's CPU pressure (PSI some +%s ms in %s ms sampled: a task waited for a CPU that long)", fmtMs(d.SystemSome), fmtMs(d.Interval))
		case d.Has(hostsig.SourceSchedstat):
			if 2*d.Wait < d.Interval {
				return dec, Inside
			}
			what = fmt.Sprintf("this host's run queue (the process's threads waited +%s ms on it in %s ms sampled; no PSI)", fmtMs(d.Wait), fmtMs(d.Interval))
		default:
			return dec, Inside
		}
	}
	if !u.pastUsual(outside) {
		dec.Rule += fmt.Sprintf("; not hedged for %s: this statement waited %s ms past %s, under half its difference — the path's wait, the same for every statement, where a backend's wait for a CPU varies",
			what, fmtMs(max(outside-u.wait, 0)), u.words())
		return dec, Inside
	}
	past := "the trace has no usual wait to set apart"
	if u.wait > 0 {
		past = fmt.Sprintf("it waited %s ms past %s, half its difference or more", fmtMs(outside-u.wait), u.words())
	}
	where := "a database on this host may have kept the backend waiting for a CPU before it read the query or after it sent the answer, which looks the same from here (a database on another host it says nothing about)"
	if dbHostOwn {
		where = "its backends may have waited for a CPU before one read the query or after it sent the answer, which looks the same from here (pressure is the host's, not this backend's, and known per scrape interval)"
	}
	dec.Rule += "; but network or db-cpu: without a recording of the database host, " + what + " says " + where + ", and " + past +
		"; `latscope dbhost` on the database host, then --dbhost, decides"
	dec.Confidence = Low
	return dec, DBCPU
}

// pressureOnly tells whether a runnable verdict of the rule "the process
// waited for a CPU for up to X: the rest is within the threshold" rests
// on the process cgroup's CPU pressure alone: the probe saw the process
// able to run as the query left and as the answer came (ran), no
// recording of the database host measured the backend, the cgroup was
// not throttled in the sampled interval (a throttled cgroup's pressure is
// its own quota's: the process's CPU, not the database's), and without
// the pressure — the stall, the goroutine's runnable time, every P busy —
// more than the threshold would be left outside the process.
func pressureOnly(outside time.Duration, ev Evidence, o Options) bool {
	o = o.withDefaults()
	stall, _, ran := probeSays(ev, outside)
	d := ev.Host
	if !ran || ev.DBHost || d == nil || !d.Has(hostsig.SourceCgroupPSI) || !d.Has(hostsig.SourceThrottle) || d.Throttled > 0 {
		return false
	}
	return outside-max(stall, ev.Runnable, ev.Busy) > o.Threshold
}

// yieldToProbe re-decides a runnable verdict that rests on the cgroup's
// CPU pressure alone (pressureOnly) as what the probe says, network, and
// hedges it: it returns the hedged decision and db-cpu as the alternative
// when the hedge names one, else Inside (the runnable verdict stands).
//
// The cgroup's pressure is wall time in which some task of the process
// waited for a CPU, counted over the sampled interval (100 ms or more)
// and pro-rated to the statement: an upper bound spread evenly, which
// cannot say the wait fell in this statement, while the probe saw the
// process run as the query left and as the answer came. On a busy host
// the database's backend waits for a CPU too, before it reads the query
// or after it sends the answer, outside the database's timer: from here
// that looks like the network, and without a recording of the database
// host, "network or db-cpu" is what the evidence supports. On the fault
// suite's kept loaded run the pressure rule called 14 of 64 statements
// runnable whose backend, by the database host's recording, waited for
// a CPU for 61–100 % of the difference.
//
// Only where the hedge qualifies the network verdict (this host or the
// database host under CPU pressure, and the statement waited past the
// trace's usual path for half its difference) does the pressure yield: a
// plain network verdict would claim the network for what the pressure may
// explain — on a loaded host the cpu condition's statements at the usual
// path were so called when the pressure yielded everywhere (docs/dbwait.md,
// "A rule tried and taken back").
func yieldToProbe(outside time.Duration, ev Evidence, u usualPath) (Decision, Verdict) {
	stall, _, _ := probeSays(ev, outside)
	d := ev.Host
	n := ranNetwork(ev, d, outside, stall)
	n.Rule += fmt.Sprintf("; the cgroup's CPU pressure, %s ms in %s ms sampled, %s ms pro-rated, would leave the rest within the threshold, but it is spread over the sampled interval and cannot place itself where the probe saw the process run",
		fmtMs(d.CgroupSome), fmtMs(d.Interval), fmtMs(prorated(d.CgroupSome, d.Interval, outside)))
	return hedge(n, ev, outside, u)
}
