package dbwait

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/tracein"
)

// evidence gathers the host delta covering q and the longest event-free
// stretch in its outside time.
func (a *Analyzer) evidence(q *Query, samples []hostsig.Sample) Evidence {
	ev := Evidence{Runnable: q.runnable}
	if d, ok := covering(samples, q.Start, q.End); ok {
		ev.Host = &d
	}
	outside, placed := a.outsideOf(q)
	ev.Placed = placed
	if placed {
		ev.BeforeDB, ev.AfterDB = outside[0].to.Sub(outside[0].from), outside[1].to.Sub(outside[1].from)
	}
	ev.DBHostWait, ev.DBHost = a.dbHostWait(q, ev)
	ev.DBHostPressure = a.dbHostPressure(q)
	ev.Gap, ev.GapStart = a.gaps.longestIn(outside...)
	ev.ProbeLate, ev.ProbeUnsure, ev.Probe = a.probe.lateIn(outside...)
	if ev.Probe {
		ev.ProbeEvery = a.probe.every
	}
	tail := outside[len(outside)-1]
	ev.Busy = a.busy.tailIn(tail, tailSlack+ev.Runnable)
	ev.TailGap = a.gaps.endingIn(tail, tailSlack+ev.Runnable)
	ev.ProbeTail, ev.ProbeTailUnsure = a.probe.tailIn(tail, tailSlack+ev.Runnable)
	if len(outside) == 2 {
		ev.ProbeHead, ev.ProbeHeadUnsure = a.probe.tailIn(outside[0], tailSlack)
	}
	return ev
}

// dbHostWait is Evidence.DBHostWait: q's backend's run-queue wait
// outside the database's timer, as the recording places it (the span's
// wait less what the passes place wholly inside the timer:
// dbhost.Waits.Place), at most the outside time. The two sides are not
// capped apart: a statement shorter than a period, or a pass up to half
// a period late (not marked late), puts a wait that ended as the timer
// started after it, and capping it by the outside time after the
// statement would lose it. What the passes place inside the timer is at most
// the statement's duration, so this is never less than the span's wait
// less that duration — which is what it is without the statement's
// times in the log (nothing to place against), a lower bound.
func (a *Analyzer) dbHostWait(q *Query, ev Evidence) (time.Duration, bool) {
	if a.dbhost == nil || !q.Matched || q.PID == 0 || q.StartWall.IsZero() {
		return 0, false
	}
	from, to := a.dbHostWindow(q)
	if q.DBEnd.IsZero() || !ev.Placed {
		w, ok := a.dbhost.In(q.PID, from, to)
		if !ok {
			return 0, false
		}
		return min(max(w-q.DB, 0), q.Outside), true
	}
	off := a.opts.PGClockOffset
	p, miss := a.dbhost.Place(q.PID, from, q.DBStart.Add(off), q.DBEnd.Add(off), to)
	if miss != dbhost.Covered {
		return 0, false
	}
	return min(p.Outside(), q.Outside), true
}

// dbHostWindow is q's span on the database host's clock.
func (a *Analyzer) dbHostWindow(q *Query) (from, to time.Time) {
	from = q.StartWall.Add(a.opts.PGClockOffset)
	return from, from.Add(q.App)
}

// outsideOf returns q's outside time on the trace's clock: the span
// minus the statement when the clocks place it (placed), else the whole
// span.
func (a *Analyzer) outsideOf(q *Query) (ivs []gap, placed bool) {
	if a.clock.known() && !q.DBEnd.IsZero() {
		dbStart, dbEnd := a.clock.trace(q.DBStart), a.clock.trace(q.DBEnd)
		return []gap{{q.Start, min(dbStart, q.End)}, {max(dbEnd, q.Start), q.End}}, true
	}
	return []gap{{q.Start, q.End}}, false
}

// tailSlack is how long before a span's end a stall may have ended and
// still have delayed it: the goroutine runs within a scheduling round of
// the process resuming (its runnable time, added by the caller, is the
// rest).
const tailSlack = 2 * time.Millisecond

// covering returns the delta from the last sample at or before start to
// the first at or after end.
func covering(samples []hostsig.Sample, start, end tracein.Time) (hostsig.Delta, bool) {
	i := sort.Search(len(samples), func(i int) bool { return tracein.Time(samples[i].Mono) > start }) - 1
	j := sort.Search(len(samples), func(i int) bool { return tracein.Time(samples[i].Mono) >= end })
	if i < 0 || j >= len(samples) {
		return hostsig.Delta{}, false
	}
	return hostsig.Diff(samples[i], samples[j]), true
}

// Classify decides where outside time went, in the order of docs/method.md §8
// (with the CPU-availability probe's evidence when the trace has it):
// throttled, steal, paused, then runnable (CPU contention without
// throttling: the goroutine was runnable, or the process's threads waited
// on the kernel's run queue, for half the difference), network;
// unknown when a cause cannot be ruled out. It is the one place the rules
// live. Zero fields of o take DefaultOptions.
//
// The host counters are read every sample interval, usually longer than
// the statement, so a counter that moved in the interval need not have
// moved during the statement. A counter explains a statement only when it
// is large enough (at least half the outside time, the share every rule
// here asks of its cause) and something places it in the statement: the
// probe woke late for half the outside time, or the trace has an
// event-free stretch that long (a throttled, stopped or stolen process
// emits no events), or, without either, the counter pro-rated to the
// statement's share of the interval (spread evenly: the counters cannot
// say when in the interval they moved) is still half the outside time.
//
//   - throttled: the cgroup's throttled time, placed so;
//   - steal: steal per CPU, Steal/n, at least outside/2 (what the whole VM
//     descheduled for half the time produces; a trickle of 10 ms ticks
//     spread over the CPUs and the interval does not reach it), and always
//     an event-free stretch: stolen time is neither run nor run-queue wait
//     in the guest. When n is unknown (Delta.CPUs 0: samples recorded
//     before hostsig kept the count), n is taken as 2, the machine the
//     recorded samples come from (stricter than the truth for n = 1);
//     runtime.NumCPU would describe the reading machine, not the
//     recording one.
func Classify(outside time.Duration, ev Evidence, o Options) Verdict {
	return Explain(outside, ev, o).Verdict
}

// Confidence is how firmly the evidence supports a verdict.
type Confidence uint8

// Confidences. High: two independent instruments agree (the probe and a
// counter, or a direct measurement of the goroutine); Medium: one
// instrument decided; Low: the decision rests on counters summed over a
// longer interval than the statement, or on ruling causes out.
const (
	NoConfidence Confidence = iota // unknown: nothing decided
	Low
	Medium
	High
)

// String returns the confidence's lower-case name ("" for NoConfidence).
func (c Confidence) String() string {
	return [...]string{"", "low", "medium", "high"}[min(int(c), 3)]
}

// MarshalText encodes the name.
func (c Confidence) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Decision is a verdict with the rule that decided it, in words with its
// numbers, and how firmly the evidence supports it.
type Decision struct {
	Verdict    Verdict
	Rule       string
	Confidence Confidence
}

// Explain is Classify with the rule that decided, in words, and the
// confidence: the evidence each verdict rests on, or what is missing for
// "unknown".
func Explain(outside time.Duration, ev Evidence, o Options) Decision {
	o = o.withDefaults()
	if outside <= o.Threshold {
		return Decision{Inside, fmt.Sprintf("difference within %v", o.Threshold), High}
	}
	// With the agent's CPU-availability probe in the trace, only the stall
	// that ended as the answer was taken (ProbeTail) and the one that ended
	// as the query left (ProbeHead) can have delayed the statement: a stall
	// that ended earlier overlapped a wait for something else, after which
	// the process could run and the goroutine still waited. A stall's
	// length is its late part plus, expected, half its unsure part (it
	// began somewhere in the period before its deadline). A stall of half
	// the outside time or more is a CPU cause; shorter, the process could
	// run for the rest: no CPU cause explains half, whatever the host
	// counters summed over their longer sampled interval say. When the
	// stall is a third of the outside time or more and the process could
	// run for another third or more, two causes each explain a large part:
	// mixed.
	//
	// The probe vouches only for the moments it woke: when the process was
	// silent (no event at all, the probe's wake-ups included) for half the
	// outside time as the answer came, it was idle or stalled and the probe
	// cannot say which; the counters decide then, pro-rated.
	stall, late, ran := probeSays(ev, outside)
	if ev.Probe {
		could := outside - stall - max(ev.Runnable, ev.Busy) // waiting while the process could run, with a P free
		if ev.DBHost {
			could -= ev.DBHostWait // the database's backend waiting for its CPU is no wait outside the hosts
		}
		if 3*stall >= outside && 3*could >= outside {
			return Decision{Mixed, fmt.Sprintf("the process could not run for %s ms of the %s ms outside, as the query left or the answer came (probe), and could for %s ms: a CPU cause and a wait outside the process together",
				fmtMs(stall), fmtMs(outside), fmtMs(could)), Medium}
		}
	}
	d := ev.Host
	if d == nil { // at the trace's edges: the probe alone can tell the network
		if ran && 2*ev.Runnable < outside && ev.DBHost && 2*ev.DBHostWait >= outside {
			// the database host's recording needs no sample of this host
			return Decision{DBCPU, fmt.Sprintf("the process could run for %s of %s ms (probe; no host sample covers the span), and the database's backend waited %s ms of it on its host's run queue outside the database's timer (as the database host's recording placed it)",
				fmtMs(outside-stall), fmtMs(outside), fmtMs(ev.DBHostWait)), Medium}
		}
		if ran && 2*ev.Runnable < outside {
			return Decision{Network, fmt.Sprintf("the process could run for %s of %s ms (probe; no host sample covers the span)", fmtMs(outside-stall), fmtMs(outside)), Medium}
		}
		return Decision{Unknown, "no host sample covers the span, and no probe says the process could run", NoConfidence}
	}
	firm := func(probeAgrees bool) Confidence {
		if probeAgrees {
			return High
		}
		return Medium
	}
	throttle := d.Has(hostsig.SourceThrottle)
	// stalled: the trace places a CPU loss in the statement
	// (a silence shorter than the probe's period may be idle waiting: when
	// silent, a counter must place itself, pro-rated)
	stalled := late || (!ev.Probe && 2*ev.Gap >= outside)
	throttled := 2*d.ThrottledTime >= outside && (stalled || 2*throttledFor(d, outside) >= outside)
	switch {
	case !ran && throttle && d.Throttled > 0 && throttled && pressureRose(d):
		return Decision{Throttled, fmt.Sprintf("nr_throttled +%d, throttled %s ms in %s ms sampled, %s, for %s ms outside; CPU pressure rose",
			d.Throttled, fmtMs(d.ThrottledTime), fmtMs(d.Interval), stallWords(ev, late, throttledFor(d, outside)), fmtMs(outside)), firm(late)}
	case !ran && stolen(d, ev.Gap, outside):
		return Decision{Steal, fmt.Sprintf("steal +%s ms in %s ms sampled and no trace events for %s ms, for %s ms outside", fmtMs(d.Steal), fmtMs(d.Interval), fmtMs(ev.Gap), fmtMs(outside)), firm(late)}
	case !ran && throttle && !throttled && ev.Gap >= minPause(ev, late, o) && ev.Gap >= outside/2 && !queued(d, ev.Gap):
		return Decision{Paused, fmt.Sprintf("no trace events for %s ms with the counters flat%s", fmtMs(ev.Gap), queuedWords(d, ev.Gap)), firm(late)}
	case ev.Runnable >= outside/2:
		return Decision{Runnable, fmt.Sprintf("the goroutine was runnable for %s of %s ms", fmtMs(ev.Runnable), fmtMs(outside)), High}
	case !ran && d.Has(hostsig.SourceSchedstat) && 2*d.Wait >= outside && (stalled || 2*prorated(d.Wait, d.Interval, outside) >= outside):
		return Decision{Runnable, fmt.Sprintf("the threads waited %s ms on the run queue over the sampled %v, for %s ms outside", fmtMs(d.Wait), d.Interval.Round(time.Millisecond), fmtMs(outside)), firm(late)}
	case ev.Busy >= outside/2:
		return Decision{Runnable, fmt.Sprintf("every P of the process ran a goroutine for %s of %s ms: the answer waited for a P (CPU contention in the process)", fmtMs(ev.Busy), fmtMs(outside)), Medium}
	case ev.DBHost && 2*ev.DBHostWait >= outside:
		return Decision{DBCPU, fmt.Sprintf("the database's backend waited %s ms on its host's run queue outside the database's timer (as the database host's recording placed it), of %s ms outside",
			fmtMs(ev.DBHostWait), fmtMs(outside)), Medium}
	case outside-cpuWait(ev, d, outside, stall) <= o.Threshold:
		// what a CPU wait can explain leaves no more outside the process
		// than the threshold allows inside: not a wait elsewhere
		w := cpuWait(ev, d, outside, stall)
		return Decision{Runnable, fmt.Sprintf("the process waited for a CPU for up to %s of %s ms (%s): the %s ms left is within the threshold",
			fmtMs(w), fmtMs(outside), cpuWaitWords(ev, d, outside, stall), fmtMs(outside-w)), Low}
	case ran && ev.DBHost && 3*ev.DBHostWait >= outside && 3*(outside-ev.DBHostWait) >= outside:
		return Decision{Mixed, fmt.Sprintf("the process could run for %s of %s ms as the query left and the answer came (probe), and the database's backend waited %s ms of it on its host's run queue outside its timer: the database host's CPU and a wait outside both hosts together",
			fmtMs(outside-stall), fmtMs(outside), fmtMs(ev.DBHostWait)), Medium}
	case ran:
		return ranNetwork(ev, d, outside, stall)
	case throttle && d.Throttled == 0 && d.Has(hostsig.SourceSteal):
		return Decision{Network, "no throttling, steal, pause or run-queue wait explains half of it", Low}
	case throttle && !throttled && d.Has(hostsig.SourceSteal):
		return Decision{Network, fmt.Sprintf("the cgroup's %s ms throttled in %s ms sampled cannot explain half of it (too little, or not placed in it), nor can steal, a pause or run-queue wait",
			fmtMs(d.ThrottledTime), fmtMs(d.Interval)), Low}
	}
	return Decision{Unknown, "a cause cannot be ruled out: " + missing(d, throttle), NoConfidence}
}

// probeSays is what the agent's CPU-availability probe says of outside
// (all false without it): the stall as the query left and the answer came
// (its late part and, expected, half its unsure part), whether that stall
// was half the outside time or more (late), and whether the process could
// run for more than half of it (ran: not late, and not silent for half of
// it as the answer came — a silence the probe cannot vouch for).
func probeSays(ev Evidence, outside time.Duration) (stall time.Duration, late, ran bool) {
	stall = min(ev.ProbeTail+ev.ProbeTailUnsure/2+ev.ProbeHead+ev.ProbeHeadUnsure/2, outside)
	late = ev.Probe && 2*stall >= outside // the probe saw the process unable to run for half
	silent := ev.Probe && !late && 2*ev.TailGap >= outside
	return stall, late, ev.Probe && !late && !silent
}

// ranNetwork is the network verdict of a statement the probe saw the
// process able to run for: High when the host's counters stayed at
// baseline, else Medium.
func ranNetwork(ev Evidence, d *hostsig.Delta, outside, stall time.Duration) Decision {
	c := Medium
	if quiet(d, outside) {
		c = High
	}
	return Decision{Network, fmt.Sprintf("the process could run for %s of %s ms as the query left and the answer came (probe: a stall that ended earlier overlapped the wait)%s", fmtMs(outside-stall), fmtMs(outside), dbHostWords(ev)), c}
}

// ProbePauses is how many of the probe's periods a silence must last
// for the paused rule to take it when the probe was late: the probe
// sleeps one period between wake-ups, so a silence of one period is its
// own sleep, and a wake-up late by up to another period is what a
// loaded host's run queue gives it. Only a silence of two periods or
// more missed a deadline by a whole period (40 ms at
// tracelog.ProbeEvery, 20 ms).
const ProbePauses = 2

// minPause is the shortest silence the paused rule takes: with the probe
// late for half the outside time, ProbePauses of its periods (never more
// than Options.MinPause); else Options.MinPause, the in-process sampler's
// bound.
func minPause(ev Evidence, late bool, o Options) time.Duration {
	if late && ev.ProbeEvery > 0 {
		return min(ProbePauses*ev.ProbeEvery, o.MinPause)
	}
	return o.MinPause
}

// queued tells whether the process may have waited for a CPU for half
// the silence or more, pro-rated from the sampled interval to the
// silence: then the silence may be a wait for a CPU, not a stop. Where
// the process's cgroup has PSI (cpu.pressure), its "some" total decides:
// it is wall time in which a task of the cgroup was runnable and not
// running, and a stopped process's tasks are not runnable, so a stop adds
// nothing to it while a process starved of CPU for the silence adds the
// silence. Else the threads' run-queue wait decides, which sums every
// thread's wait: a process that wakes its threads together after a stop,
// on a loaded host, adds several times the wall time. Both are counted
// over the whole interval, usually far longer than the silence; a stopped
// process's tasks are not on the run queue, so on a loaded host the
// interval's wait lies elsewhere in it, and the counter is pro-rated.
// Unprorated, a 300 ms stop in a 700 ms sample was called runnable for
// the wait of the other 400 ms; pro-rated but summed over threads, a
// 300 ms stop in a 500 ms sample still was (564 ms of run-queue wait,
// 340 ms pro-rated, while the cgroup's PSI some was 145 ms, 87 ms
// pro-rated: issue 34).
func queued(d *hostsig.Delta, silence time.Duration) bool {
	if d.Has(hostsig.SourceCgroupPSI) {
		return 2*prorated(d.CgroupSome, d.Interval, silence) >= silence
	}
	return d.Has(hostsig.SourceSchedstat) && 2*prorated(d.Wait, d.Interval, silence) >= silence
}

// queuedWords gives, for a paused verdict, the CPU wait it pro-rated ("" without
// a counter, or with a counter at 0).
func queuedWords(d *hostsig.Delta, silence time.Duration) string {
	switch {
	case d.Has(hostsig.SourceCgroupPSI):
		return fmt.Sprintf(" (the cgroup's CPU pressure %s ms in %s ms sampled, %s ms pro-rated to the silence: a stopped process adds none)", fmtMs(d.CgroupSome), fmtMs(d.Interval), fmtMs(prorated(d.CgroupSome, d.Interval, silence)))
	case !d.Has(hostsig.SourceCgroupPSI) && d.Has(hostsig.SourceSchedstat) && d.Wait > 0:
		return fmt.Sprintf(" (run-queue wait %s ms in %s ms sampled, %s ms pro-rated to the silence)", fmtMs(d.Wait), fmtMs(d.Interval), fmtMs(prorated(d.Wait, d.Interval, silence)))
	}
	return ""
}

// dbHostWords says, for a network verdict, how little the database's
// backend waited on its host's run queue ("" without a recording).
func dbHostWords(ev Evidence) string {
	if !ev.DBHost {
		return ""
	}
	return fmt.Sprintf("; the database's backend waited %s ms on its host's run queue outside its timer", fmtMs(ev.DBHostWait))
}

// prorated is the part of total, counted over interval, that falls in
// outside time, spread evenly over the interval.
func prorated(total, interval, outside time.Duration) time.Duration {
	if interval <= 0 || outside >= interval {
		return total
	}
	return time.Duration(float64(total) * float64(outside) / float64(interval))
}

// throttledFor is the cgroup's throttled time pro-rated to outside.
func throttledFor(d *hostsig.Delta, outside time.Duration) time.Duration {
	return prorated(d.ThrottledTime, d.Interval, outside)
}

// cpuWait is how much of outside a wait for a CPU can explain: the
// largest of the stall as the answer came (probe), the goroutine's own
// runnable time, the time every P was busy, and the process cgroup's CPU
// pressure (PSI some: some task of it waited for a CPU) pro-rated over
// the sampled interval. The machine's PSI is no evidence: on a busy host
// it is high whatever the process does.
func cpuWait(ev Evidence, d *hostsig.Delta, outside, stall time.Duration) time.Duration {
	w := max(stall, ev.Runnable, ev.Busy)
	if d != nil && d.Has(hostsig.SourceCgroupPSI) {
		w = max(w, min(prorated(d.CgroupSome, d.Interval, outside), outside))
	}
	return w
}

// cpuWaitWords names the parts of cpuWait.
func cpuWaitWords(ev Evidence, d *hostsig.Delta, outside, stall time.Duration) string {
	var parts []string
	if stall > 0 {
		parts = append(parts, "probe late "+fmtMs(stall)+" ms")
	}
	if ev.Runnable > 0 {
		parts = append(parts, "goroutine runnable "+fmtMs(ev.Runnable)+" ms")
	}
	if ev.Busy > 0 {
		parts = append(parts, "every P busy "+fmtMs(ev.Busy)+" ms")
	}
	if d != nil && d.Has(hostsig.SourceCgroupPSI) && d.CgroupSome > 0 {
		parts = append(parts, fmt.Sprintf("cgroup CPU pressure %s ms in %s ms sampled, %s ms pro-rated", fmtMs(d.CgroupSome), fmtMs(d.Interval), fmtMs(prorated(d.CgroupSome, d.Interval, outside))))
	}
	return strings.Join(parts, ", ")
}

// stallWords says what placed a CPU loss in the statement.
func stallWords(ev Evidence, late bool, prorated time.Duration) string {
	switch {
	case late:
		return fmt.Sprintf("the probe late %s ms as the query left and the answer came", fmtMs(ev.ProbeTail+ev.ProbeHead))
	case !ev.Probe && ev.Gap > 0:
		return fmt.Sprintf("no trace events for %s ms", fmtMs(ev.Gap))
	}
	return fmt.Sprintf("%s ms pro-rated", fmtMs(prorated))
}

// quiet tells whether the host counters stayed at baseline around a
// statement: no throttling and no steal that could explain a tenth of its
// outside time, pro-rated.
func quiet(d *hostsig.Delta, outside time.Duration) bool {
	if !d.Has(hostsig.SourceThrottle) || !d.Has(hostsig.SourceSteal) {
		return false
	}
	n := time.Duration(max(d.CPUs, 1))
	return 10*throttledFor(d, outside) < outside && 10*prorated(d.Steal, d.Interval, outside) < n*outside
}

// missing says which evidence an unknown verdict lacked.
func missing(d *hostsig.Delta, throttle bool) string {
	switch {
	case !throttle:
		return "the cgroup's throttle counters are absent"
	case !d.Has(hostsig.SourceSteal):
		return "the steal counter is absent"
	case d.Throttled > 0:
		return "the cgroup was throttled enough in the sampled interval to explain half, but CPU pressure did not rise"
	}
	return "no rule applies"
}

// fmtMs formats d in milliseconds for a rule's words.
func fmtMs(d time.Duration) string { return strconv.FormatFloat(units.Ms(d), 'f', -1, 64) }

// stolen tells whether the host took the process's CPU for at least half
// the outside time: steal per CPU of at least outside/2 (n taken as 2 when
// the CPU count is unknown) and an event-free stretch as long.
func stolen(d *hostsig.Delta, gap, outside time.Duration) bool {
	if !d.Has(hostsig.SourceSteal) || d.Steal <= 0 || 2*gap < outside {
		return false
	}
	n := time.Duration(cmp.Or(d.CPUs, 2))
	return 2*d.Steal >= n*outside // Steal/n >= outside/2, without rounding
}

// pressureRose tells whether CPU pressure confirms throttling: the cgroup's
// PSI some when it is known, else the machine's, else nothing to confirm.
func pressureRose(d *hostsig.Delta) bool {
	switch {
	case d.Has(hostsig.SourceCgroupPSI):
		return d.CgroupSome > 0
	case d.Has(hostsig.SourceSystemPSI):
		return d.SystemSome > 0
	}
	return true
}
