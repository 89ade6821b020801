package dbwait

import (
	"sort"
	"time"

	"github.com/latscope/latscope/internal/tracein"
)

// gapMin is the shortest event-free stretch kept. Shorter ones are never
// evidence of anything (a busy process has them every microsecond).
const gapMin = time.Millisecond

// gap is a stretch of the trace with no event at all.
type gap struct{ from, to tracein.Time }

// gapList records the event-free stretches of a trace from its event times.
type gapList struct {
	gaps        []gap
	first, last tracein.Time
	seen        bool
}

// add takes the time of the next event. Out-of-order times are ignored.
func (g *gapList) add(t tracein.Time) {
	switch {
	case !g.seen:
		g.first, g.last, g.seen = t, t, true
	case t > g.last:
		if t.Sub(g.last) >= gapMin {
			g.gaps = append(g.gaps, gap{g.last, t})
		}
		g.last = t
	}
}

// longestIn returns the longest part of a single gap that lies inside the
// union of the intervals ivs (each [from, to)), and where that part starts.
func (g *gapList) longestIn(ivs ...gap) (time.Duration, tracein.Time) {
	var best time.Duration
	var at tracein.Time
	for _, iv := range ivs {
		if iv.to <= iv.from {
			continue
		}
		i := sort.Search(len(g.gaps), func(i int) bool { return g.gaps[i].to > iv.from })
		for ; i < len(g.gaps) && g.gaps[i].from < iv.to; i++ {
			from, to := max(g.gaps[i].from, iv.from), min(g.gaps[i].to, iv.to)
			if d := to.Sub(from); d > best {
				best, at = d, from
			}
		}
	}
	return best, at
}

// endingIn returns how much of iv the event-free stretch that ended as iv
// ended covers: the first gap ending at or after iv.to − slack.
func (g *gapList) endingIn(iv gap, slack time.Duration) time.Duration {
	i := sort.Search(len(g.gaps), func(i int) bool { return g.gaps[i].to >= iv.to-tracein.Time(slack) })
	if i == len(g.gaps) || g.gaps[i].from >= iv.to {
		return 0
	}
	return overlap(g.gaps[i], iv)
}
