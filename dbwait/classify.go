package dbwait

import (
	"sort"
	"time"

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
	ev.ProbeLate, ev.Probe = a.probe.lateIn(outside...)
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
	o = o.withDefaults()
	if outside <= o.Threshold {
		return Inside
	}
	// With the agent's CPU-availability probe in the trace, a probe that woke
	// on time for at least half the outside time says the process could run
	// then: no CPU cause can explain half of it, whatever the host counters
	// summed over their longer sampled interval say.
	ran := ev.Probe && 2*ev.ProbeLate < outside
	d := ev.Host
	if d == nil { // at the trace's edges: the probe alone can tell the network
		if ran && 2*ev.Runnable < outside {
			return Network
		}
		return Unknown
	}
	throttle := d.Has(hostsig.SourceThrottle)
	switch {
	case !ran && throttle && d.Throttled > 0 && 2*d.ThrottledTime >= outside && pressureRose(d):
		return Throttled
	case !ran && stolen(d, ev.Gap, outside):
		return Steal
	case !ran && throttle && d.Throttled == 0 && ev.Gap >= o.MinPause && ev.Gap >= outside/2 &&
		(!d.Has(hostsig.SourceSchedstat) || d.Wait < ev.Gap/2):
		return Paused
	case ev.Runnable >= outside/2 || !ran && d.Has(hostsig.SourceSchedstat) && d.Wait >= outside/2:
		return Runnable
	case ran || throttle && d.Throttled == 0 && d.Has(hostsig.SourceSteal):
		return Network
	}
	return Unknown
}

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
