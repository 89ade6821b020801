package dbwait

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/hostsig"
	"github.com/latscope/latscope/tracein"
)

// evidence gathers the host delta covering q and the longest event-free
// stretch in its outside time.
func (a *Analyzer) evidence(q *Query, samples []hostsig.Sample) Evidence {
	ev := Evidence{Runnable: q.runnable}
	if d, ok := covering(samples, q.Start, q.End); ok {
		ev.Host = &d
	}
	outside := []gap{{q.Start, q.End}}
	if a.clock.known() && !q.DBEnd.IsZero() {
		dbStart, dbEnd := a.clock.trace(q.DBStart), a.clock.trace(q.DBEnd)
		outside = []gap{{q.Start, min(dbStart, q.End)}, {max(dbEnd, q.Start), q.End}}
		ev.Placed = true
	}
	ev.Gap, ev.GapStart = a.gaps.longestIn(outside...)
	ev.ProbeLate, ev.ProbeUnsure, ev.Probe = a.probe.lateIn(outside...)
	return ev
}

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
// Steal needs two pieces of evidence that the hypervisor took the
// process's CPU for at least half the outside time (the share every rule
// here asks of its cause), because /proc/stat steal is summed over all n
// CPUs and over the whole sampled interval, often several times longer
// than the statement:
//
//   - steal per CPU, Steal/n, at least outside/2: what the whole VM
//     descheduled for half the outside time produces (on 2 CPUs, one vCPU
//     lost for all of it). A trickle of 10 ms ticks spread over the CPUs
//     and the interval does not reach it;
//   - a stall in the trace, ev.Gap at least outside/2: stolen time is
//     neither run nor run-queue wait in the guest, so a process whose
//     CPU was taken emits no trace events meanwhile. No MinPause here: the
//     counter, not the length of the silence, tells it from an idle wait.
//
// When n is unknown (Delta.CPUs 0: samples recorded before hostsig kept
// the count), Steal must be at least the whole outside time, one vCPU's
// worth of the missing time: the rule for n = 2, the machine the recorded
// samples come from, and stricter than it for n = 1. Below that it is not
// steal; runtime.NumCPU would describe the reading machine, not the
// recording one. Steal without a gap is not steal either: the rules below
// decide, and the paused rule takes a gap without enough steal.
func Classify(outside time.Duration, ev Evidence, o Options) Verdict {
	v, _ := Explain(outside, ev, o)
	return v
}

// Explain is Classify with the rule that decided, in words, for the
// output: the evidence each verdict rests on, or what is missing for
// "unknown".
func Explain(outside time.Duration, ev Evidence, o Options) (Verdict, string) {
	o = o.withDefaults()
	if outside <= o.Threshold {
		return Inside, fmt.Sprintf("difference within %v", o.Threshold)
	}
	// With the agent's CPU-availability probe in the trace, a probe that woke
	// on time for at least half the outside time says the process could run
	// then: no CPU cause can explain half of it, whatever the host counters
	// summed over their longer sampled interval say. When the probe was late
	// for a third of it or more and the process could run for another third
	// or more, two causes each explain a large part: mixed.
	ran := ev.Probe && 2*ev.ProbeLate < outside
	if ev.Probe {
		could := outside - ev.ProbeLate - ev.ProbeUnsure - ev.Runnable // waiting while the process surely could run
		if 3*ev.ProbeLate >= outside && 3*could >= outside {
			return Mixed, fmt.Sprintf("the process could not run for %s ms of the %s ms outside (probe) and could for %s ms: a CPU cause and a wait outside the process together",
				fmtMs(ev.ProbeLate), fmtMs(outside), fmtMs(could))
		}
	}
	d := ev.Host
	if d == nil { // at the trace's edges: the probe alone can tell the network
		if ran && 2*ev.Runnable < outside {
			return Network, fmt.Sprintf("the probe ran on time for %s of %s ms (no host sample covers the span)", fmtMs(outside-ev.ProbeLate), fmtMs(outside))
		}
		return Unknown, "no host sample covers the span, and no probe says the process could run"
	}
	throttle := d.Has(hostsig.SourceThrottle)
	switch {
	case !ran && throttle && d.Throttled > 0 && 2*d.ThrottledTime >= outside && pressureRose(d):
		return Throttled, fmt.Sprintf("nr_throttled +%d, throttled %s ms for %s ms outside, CPU pressure rose", d.Throttled, fmtMs(d.ThrottledTime), fmtMs(outside))
	case !ran && stolen(d, ev.Gap, outside):
		return Steal, fmt.Sprintf("steal +%s ms and no trace events for %s ms, for %s ms outside", fmtMs(d.Steal), fmtMs(ev.Gap), fmtMs(outside))
	case !ran && throttle && d.Throttled == 0 && ev.Gap >= o.MinPause && ev.Gap >= outside/2 &&
		(!d.Has(hostsig.SourceSchedstat) || d.Wait < ev.Gap/2):
		return Paused, fmt.Sprintf("no trace events for %s ms with the counters flat", fmtMs(ev.Gap))
	case ev.Runnable >= outside/2:
		return Runnable, fmt.Sprintf("the goroutine was runnable for %s of %s ms", fmtMs(ev.Runnable), fmtMs(outside))
	case !ran && d.Has(hostsig.SourceSchedstat) && d.Wait >= outside/2:
		return Runnable, fmt.Sprintf("the threads waited %s ms on the run queue over the sampled %v, for %s ms outside", fmtMs(d.Wait), d.Interval.Round(time.Millisecond), fmtMs(outside))
	case ran:
		return Network, fmt.Sprintf("the probe ran on time for %s of %s ms: the process could run", fmtMs(outside-ev.ProbeLate), fmtMs(outside))
	case throttle && d.Throttled == 0 && d.Has(hostsig.SourceSteal):
		return Network, "no throttling, steal, pause or run-queue wait explains half of it"
	}
	return Unknown, "a cause cannot be ruled out: " + missing(d, throttle)
}

// missing says which evidence an unknown verdict lacked.
func missing(d *hostsig.Delta, throttle bool) string {
	switch {
	case !throttle:
		return "the cgroup's throttle counters are absent"
	case !d.Has(hostsig.SourceSteal):
		return "the steal counter is absent"
	case d.Throttled > 0:
		return "the cgroup was throttled in the sampled interval, too little or without pressure to explain half"
	}
	return "no rule applies"
}

// fmtMs formats d in milliseconds for a rule's words.
func fmtMs(d time.Duration) string { return strconv.FormatFloat(units.Ms(d), 'f', -1, 64) }

// stolen tells whether the host took the process's CPU for at least half
// the outside time: steal per CPU of at least outside/2 (the whole outside
// time when the CPU count is unknown) and an event-free stretch as long.
func stolen(d *hostsig.Delta, gap, outside time.Duration) bool {
	if !d.Has(hostsig.SourceSteal) || d.Steal <= 0 || 2*gap < outside {
		return false
	}
	if d.CPUs > 0 {
		return 2*d.Steal >= time.Duration(d.CPUs)*outside // Steal/n >= outside/2, without rounding
	}
	return d.Steal >= outside
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
