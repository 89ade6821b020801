package dbwait

import (
	"sort"
	"time"

	"github.com/latscope/latscope/tracein"
	"github.com/latscope/latscope/tracelog"
)

// probeLog holds what the agent's CPU-availability probe (tracelog.Probe)
// wrote into the trace: whether it ran, and each stretch it woke late for.
type probeLog struct {
	on    bool         // a heartbeat was seen: the probe ran
	since tracein.Time // the first heartbeat
	late  []gap        // [wake-up − lateness, wake-up], in trace order
	bad   int          // logs that did not parse
}

// add takes one probe log at t.
func (p *probeLog) add(t tracein.Time, msg string) {
	on, late, err := tracelog.ParseProbe(msg)
	switch {
	case err != nil:
		p.bad++
	case on:
		if !p.on {
			p.on, p.since = true, t
		}
	default:
		p.late = append(p.late, gap{t - tracein.Time(late), t})
	}
}

// lateIn returns how much of the intervals ivs the probe spent waking late
// (the process could not run), and whether the probe ran by then: ok false
// means the trace says nothing about it.
func (p *probeLog) lateIn(ivs ...gap) (time.Duration, bool) {
	if !p.on {
		return 0, false
	}
	var sum time.Duration
	covered := false
	for _, iv := range ivs {
		// the probe beats every tracelog.ModuleEvery: before its first beat
		// by more than that, it may not have run yet
		if iv.to <= iv.from || iv.to < p.since-tracein.Time(tracelog.ModuleEvery) {
			continue
		}
		covered = true
		i := sort.Search(len(p.late), func(i int) bool { return p.late[i].to > iv.from })
		for ; i < len(p.late) && p.late[i].from < iv.to; i++ {
			sum += min(p.late[i].to, iv.to).Sub(max(p.late[i].from, iv.from))
		}
	}
	return sum, covered
}
