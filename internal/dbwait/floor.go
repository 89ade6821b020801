package dbwait

import (
	"fmt"
	"slices"
	"time"

	"github.com/latscope/latscope/internal/tracein"
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

// floorShared tells whether the trace's statements share a path as slow as
// floor: the floor stands for every statement's wait outside the database
// only when nearly all of them waited that long, less the threshold. A
// tenth of the statements faster than that (below, the tenth-fastest's
// difference) says the statements called network waited on something
// else — the database host's own CPU, a stall the probe did not see —
// and no floor is used: under a quota on a host at a load average of 13–
// 40, 8 such statements made a floor of 69 ms that turned 104 of 109
// throttled statements into network.
func floorShared(qs []Query, floor, threshold time.Duration) (ok bool, tenth time.Duration) {
	ds := make([]time.Duration, 0, len(qs))
	for _, q := range qs {
		ds = append(ds, q.Outside)
	}
	tenth = quantile(ds, 0.1)
	return tenth >= floor-threshold, tenth
}

// settleFloor checks the floor of the n statements called network
// against all of them (floorShared). When they do not share a path that
// slow, the tenth-fastest difference is the floor if it is outside the
// database (over the threshold), else there is none; warn says which
// (nil when the floor stands).
func settleFloor(qs []Query, floor time.Duration, n int, threshold time.Duration) (time.Duration, int, error) {
	if floor <= 0 {
		return floor, n, nil
	}
	ok, tenth := floorShared(qs, floor, threshold)
	if ok {
		return floor, n, nil
	}
	what, newFloor, newN := "no network floor", time.Duration(0), 0
	if tenth > threshold {
		what, newFloor, newN = fmt.Sprintf("network floor %v, the tenth-fastest difference", tenth.Round(time.Microsecond)), tenth, len(qs)
	}
	return newFloor, newN, fmt.Errorf("%s: the %d statements called network waited %v outside the database (median), but a tenth of all statements waited %v or less, so they do not share a path that slow",
		what, n, floor.Round(time.Microsecond), tenth.Round(time.Microsecond))
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

// floorStall is Evidence.FloorStall: how much of q's wait past the
// trace's network floor the probe's stalls explain. By the floor, the
// answer was due one floor after the query left, that is rest = Outside −
// floor before the span ended; a stall in those last rest of the outside
// time held an answer already there. And wherever a stall lay, the network
// wait can have overlapped at most a floor of it. Each stall counts its
// late part and, expected, half the period before its deadline (it began
// somewhere in it): the stall so placed is overlapped with that rest.
func (a *Analyzer) floorStall(q *Query, floor time.Duration) time.Duration {
	rest := q.Outside - floor
	due := gap{q.End - tracein.Time(rest), q.End}
	outside, _ := a.outsideOf(q)
	var ivs []gap
	for _, iv := range outside {
		if from, to := max(iv.from, due.from), min(iv.to, due.to); to > from {
			ivs = append(ivs, gap{from, to})
		}
	}
	excess := q.Evidence.ProbeLate + q.Evidence.ProbeUnsure/2 - floor
	return max(a.probe.expectedIn(ivs...), excess, 0)
}

// refloor revisits a network or mixed verdict of a statement that waited
// longer than the trace's network floor plus the threshold, when the
// probe's stalls explain that wait past the floor to within the threshold
// (Evidence.FloorStall): the network then took a floor of it and a CPU
// cause the rest, and the shares decide as the probe's stall does in
// Explain (mixed when both are a third or more, a CPU cause when the rest
// is half or more). When the stalls explain half of the wait past the
// floor or more but not all of it, they are the CPU's share and the rest
// the network's (a process under a quota, let run between stalls, may
// still not reach the answer before the next one). A stall that ended a few ms before the answer was
// taken — the runtime polls the network only once a thread runs again —
// or that lay mid-wait, longer than the floor, is counted so. Without a
// floor, or when the stalls explain less than half the wait past it (the
// network was slower than usual), the verdict stands.
//
// With no network floor, floor may be the usual statement's difference
// (the median of all n, within the threshold: inside the database), and
// usual says so; the wait past it is weighed the same way.
func refloor(q *Query, floor time.Duration, n int, usual bool, o Options) {
	o = o.withDefaults()
	ev := q.Evidence
	rest := q.Outside - floor
	explained := rest-ev.FloorStall <= o.Threshold
	if !ev.Probe || floor <= 0 || rest <= o.Threshold || !explained && 2*ev.FloorStall < rest {
		return
	}
	if q.Verdict != Network && q.Verdict != Mixed {
		return // a CPU verdict stands; reweigh weighs it against the floor
	}
	sy := ev // the wait past the floor as the stall the answer waited on
	stall := rest
	if !explained {
		stall = ev.FloorStall // half of it or more: the shares decide
	}
	sy.ProbeTail, sy.ProbeTailUnsure, sy.ProbeHead, sy.ProbeHeadUnsure = stall, 0, 0, 0
	dec := Explain(q.Outside, sy, o)
	switch dec.Verdict {
	case Network, Unknown, Inside, q.Verdict:
		return
	}
	q.Verdict, q.Confidence = dec.Verdict, min(dec.Confidence, Medium)
	base := fmt.Sprintf("the trace's statements on time waited %s ms outside the process (median of %d)", fmtMs(floor), n)
	if usual {
		base = fmt.Sprintf("the trace's statements usually waited %s ms outside the database (median of all %d)", fmtMs(floor), n)
	}
	how := "to within the threshold"
	if !explained {
		how = "half of it or more"
	}
	q.Rule = fmt.Sprintf("%s; this one's answer, due then, waited %s ms more, and the probe's stalls explain %s ms of that (%s), so the process could not run for it: %s",
		base, fmtMs(rest), fmtMs(ev.FloorStall), how, dec.Rule)
}
