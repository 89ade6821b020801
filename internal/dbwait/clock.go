package dbwait

import (
	"sort"
	"time"

	"github.com/latscope/latscope/internal/tracein"
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

// at returns the index of the point that governs trace time t: the
// latest at or before it, else the first.
func (c *clock) at(t tracein.Time) int {
	i := sort.Search(len(c.points), func(i int) bool { return c.points[i].t > t })
	return max(i-1, 0)
}

// wall maps a trace time to wall-clock time. The clock must be known.
// Between two points it interpolates: the wall clock may run at another
// rate than the monotonic one (NTP slewing it; on this project's VM it
// gained 5 ms a second for minutes), and taking the last point at slope 1
// then errs by up to the drift over the points' spacing. Outside them it
// goes on at slope 1 from the nearest.
func (c *clock) wall(t tracein.Time) time.Time {
	i := c.at(t)
	p := c.points[i]
	d := t.Sub(p.t)
	if i+1 < len(c.points) && t >= p.t {
		q := c.points[i+1]
		if span := q.t.Sub(p.t); span > 0 {
			d = time.Duration(float64(d) * float64(q.wall.Sub(p.wall)) / float64(span))
		}
	}
	return p.wall.Add(d)
}

// trace maps a wall-clock time to trace time: the inverse of wall, found
// from a first estimate at slope 1 and two corrections (the slope is
// within a few parts in a thousand of 1).
func (c *clock) trace(w time.Time) tracein.Time {
	p := c.points[0]
	t := p.t + tracein.Time(w.Sub(p.wall))
	for range 3 {
		t += tracein.Time(w.Sub(c.wall(t)))
	}
	return t
}
