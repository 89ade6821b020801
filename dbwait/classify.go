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

// Classify decides where outside time went, in the order of design §6:
// throttled, steal, paused, then runnable (CPU contention without
// throttling: the goroutine was runnable, or the process's threads waited
// on the kernel's run queue, for half the difference), network;
// unknown when a cause cannot be ruled out. It is the one place the rules
// live. Zero fields of o take DefaultOptions.
func Classify(outside time.Duration, ev Evidence, o Options) Verdict {
	o = o.withDefaults()
	if outside <= o.Threshold {
		return Inside
	}
	d := ev.Host
	if d == nil {
		return Unknown
	}
	throttle := d.Has(hostsig.SourceThrottle)
	switch {
	case throttle && d.Throttled > 0 && pressureRose(d):
		return Throttled
	case d.Has(hostsig.SourceSteal) && d.Steal > 0 && d.Steal >= outside/2:
		return Steal
	case throttle && d.Throttled == 0 && ev.Gap >= o.MinPause && ev.Gap >= outside/2 &&
		(!d.Has(hostsig.SourceSchedstat) || d.Wait < ev.Gap/2):
		return Paused
	case ev.Runnable >= outside/2 || d.Has(hostsig.SourceSchedstat) && d.Wait >= outside/2:
		return Runnable
	case throttle && d.Throttled == 0 && d.Has(hostsig.SourceSteal):
		return Network
	}
	return Unknown
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
