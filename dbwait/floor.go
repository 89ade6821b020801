package dbwait

import (
	"fmt"
	"slices"
	"time"
)

// minFloor is the fewest statements a network floor is taken from.
const minFloor = 5

// networkFloor is the trace's usual wait outside the database: the median
// difference of the statements called network with high confidence (the
// probe on time, the counters flat) or, with fewer than minFloor of those
// (a quota moves the counters in every interval), of those the probe alone
// called network; 0 with fewer than minFloor of either.
func networkFloor(qs []Query) (floor time.Duration, n int) {
	var ds []time.Duration
	for _, min := range []Confidence{High, Medium} {
		ds = ds[:0]
		for _, q := range qs {
			if q.Verdict == Network && q.Confidence >= min && q.Evidence.Probe {
				ds = append(ds, q.Outside)
			}
		}
		if len(ds) >= minFloor {
			break
		}
	}
	if len(ds) < minFloor {
		return 0, len(ds)
	}
	slices.Sort(ds)
	return ds[len(ds)/2], len(ds)
}

// reweigh revisits a CPU or mixed verdict that the probe's stall decided
// when the trace's network floor is a large share of the statement's
// difference.
// Every statement of the trace waited about that long outside the process
// (a network's delay, or a far server's), so a stall that covered this
// one's whole difference overlapped that wait, and only the rest is the
// CPU's: with the floor at least half the difference and the rest under a
// third, network; with both a third or more, mixed (docs/dbwait.md,
// "The network floor").
func reweigh(q *Query, floor time.Duration, n int) {
	o := q.Outside
	switch q.Verdict {
	case Throttled, Steal, Paused, Runnable, Mixed:
	default:
		return
	}
	if !q.Evidence.Probe || floor <= 0 {
		return
	}
	cpu := max(o-floor, 0)
	why := fmt.Sprintf("the trace's statements on time waited %s ms outside the process (median of %d): %s of this one's %s ms; the %s (%s) overlapped that wait for the rest",
		fmtMs(floor), n, fmtMs(min(floor, o)), fmtMs(o), q.Verdict, q.Rule)
	switch {
	case 2*floor >= o && 3*cpu < o:
		q.Verdict, q.Confidence, q.Rule = Network, Medium, why
	case 3*floor >= o && 3*cpu >= o:
		q.Verdict, q.Confidence, q.Rule = Mixed, Medium, why
	}
}
