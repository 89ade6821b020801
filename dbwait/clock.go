package dbwait

import (
	"sort"
	"time"

	"github.com/latscope/latscope/tracein"
)

// clock maps trace times to wall-clock times from pairs read at the same
// instant: the trace's clock snapshots, or host samples (Mono, Wall).
type clock struct{ points []clockPoint }

type clockPoint struct {
	t    tracein.Time
	wall time.Time
}

func (c *clock) add(t tracein.Time, wall time.Time) {
	c.points = append(c.points, clockPoint{t, wall})
}

func (c *clock) known() bool { return len(c.points) > 0 }

// sort orders the points by trace time (snapshots come in order; samples
// from a file may not).
func (c *clock) sort() {
	sort.SliceStable(c.points, func(i, j int) bool { return c.points[i].t < c.points[j].t })
}

// at returns the point that governs trace time t: the latest at or before
// it, else the first.
func (c *clock) at(t tracein.Time) clockPoint {
	i := sort.Search(len(c.points), func(i int) bool { return c.points[i].t > t })
	return c.points[max(i-1, 0)]
}

// wall maps a trace time to wall-clock time. The clock must be known.
func (c *clock) wall(t tracein.Time) time.Time {
	p := c.at(t)
	return p.wall.Add(t.Sub(p.t))
}

// trace maps a wall-clock time to trace time, with the point governing the
// first estimate.
func (c *clock) trace(w time.Time) tracein.Time {
	p := c.points[0]
	t := p.t + tracein.Time(w.Sub(p.wall))
	p = c.at(t)
	return p.t + tracein.Time(w.Sub(p.wall))
}
