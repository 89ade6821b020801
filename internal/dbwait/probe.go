package dbwait

import (
	"sort"
	"time"

	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// probeLog holds what the agent's CPU-availability probe (tracelog.Probe)
// wrote into the trace: whether it ran, and each stretch it woke late for.
type probeLog struct {
	on    bool          // a heartbeat was seen: the probe ran
	since tracein.Time  // the first heartbeat
	every time.Duration // its period, from the heartbeat
	late  []gap         // [wake-up − lateness, wake-up], in trace order
	bad   int           // logs that did not parse
}

// add takes one probe log at t.
func (p *probeLog) add(t tracein.Time, msg string) {
	m, err := tracelog.ParseProbe(msg)
	switch {
	case err != nil:
		p.bad++
	case m.On:
		if !p.on {
			p.on, p.since = true, t
		}
		p.every = m.Every
	default:
		p.late = append(p.late, gap{t - tracein.Time(m.Late), t})
	}
}

// lateIn returns how much of the intervals ivs the probe spent waking late
// (the process could not run), how much more it may have (a late wake-up
// says the stall began after the previous wake-up, one period before its
// deadline, not when), and whether the probe ran by then: ok false means
// the trace says nothing about it.
func (p *probeLog) lateIn(ivs ...gap) (late, unsure time.Duration, ok bool) {
	if !p.on {
		return 0, 0, false
	}
	for _, iv := range ivs {
		// the probe beats every tracelog.ModuleEvery: before its first beat
		// by more than that, it may not have run yet
		if iv.to <= iv.from || iv.to < p.since-tracein.Time(tracelog.ModuleEvery) {
			continue
		}
		ok = true
		i := sort.Search(len(p.late), func(i int) bool { return p.late[i].to > iv.from })
		for ; i < len(p.late) && p.late[i].from-tracein.Time(p.every) < iv.to; i++ {
			l := p.late[i]
			late += overlap(l, iv)
			unsure += overlap(gap{l.from - tracein.Time(p.every), l.from}, iv)
		}
	}
	return late, unsure, ok
}

// expectedIn returns how much of the intervals ivs the probe's stalls
// cover when each is taken to have begun, as expected, half a period
// before its deadline (its late part plus half the period before it).
func (p *probeLog) expectedIn(ivs ...gap) time.Duration {
	if !p.on {
		return 0
	}
	var d time.Duration
	half := tracein.Time(p.every / 2)
	for _, iv := range ivs {
		if iv.to <= iv.from {
			continue
		}
		i := sort.Search(len(p.late), func(i int) bool { return p.late[i].to > iv.from })
		for ; i < len(p.late) && p.late[i].from-half < iv.to; i++ {
			d += overlap(gap{p.late[i].from - half, p.late[i].to}, iv)
		}
	}
	return d
}

// tailIn returns the stall that ended as iv ended: the last late wake-up
// at or after iv.to − slack (the process resumed then, and the waiting
// goroutine with it), overlapped with iv, and the period before it that
// may also have been stalled (unsure). Only that stall can have delayed
// the end of iv: after a stall that ended earlier the process could run,
// so the goroutine still waiting then was waiting for something else.
func (p *probeLog) tailIn(iv gap, slack time.Duration) (late, unsure time.Duration) {
	if !p.on || iv.to <= iv.from {
		return 0, 0
	}
	i := sort.Search(len(p.late), func(i int) bool { return p.late[i].to >= iv.to-tracein.Time(slack) }) // first one ending near or after iv's end
	if i == len(p.late) || p.late[i].from >= iv.to {
		return 0, 0
	}
	l := p.late[i]
	return overlap(l, iv), overlap(gap{l.from - tracein.Time(p.every), l.from}, iv)
}

// overlap is how much of a lies in b.
func overlap(a, b gap) time.Duration {
	if d := min(a.to, b.to).Sub(max(a.from, b.from)); d > 0 {
		return d
	}
	return 0
}
