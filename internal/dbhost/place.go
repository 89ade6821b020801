package dbhost

import "time"

// Placement is a backend's run-queue wait over a statement's span, placed
// against the database's own timer by the recorder's passes: before the
// timer started (the backend, woken by the query, waited for a CPU to
// read it), during it, and after it stopped (it waited for a CPU to send
// the answer). The three sum to In over the span.
type Placement struct {
	Before, During, After time.Duration
}

// Outside is the wait outside the database's timer: Before + After.
func (p Placement) Outside() time.Duration { return p.Before + p.After }

// Place places backend pid's run-queue wait over the span [from, to]
// whose statement's timer ran over [start, end]. The kernel adds a wait
// to the counter when it ends, as the backend gets its CPU, so a pass
// counts the waits that ended since the previous one, and a wait that
// ended inside the timer began inside it (the backend ran as it started
// the timer). During is what the passes place wholly inside the timer:
// the counter's rise from the first pass after start to the last pass at
// or before end. Before is the rise up to that first pass after start,
// After the rise from the later of the two: each is, like In, to within
// one period (a wait that ended in the period after start counts before;
// one in the period before end counts after). A statement shorter than a
// period has no During: its passes cannot tell. Place answers only when
// Cover(pid, from, to) does, with its Miss otherwise; a recording does
// not subtract the statement's duration from the span's wait, so a
// statement that slept on a lock (no run-queue wait) loses none of the
// wait before it.
func (w *Waits) Place(pid int, from, start, end, to time.Time) (Placement, Miss) {
	total, miss := w.Cover(pid, from, to)
	if miss != Covered {
		return Placement{}, miss
	}
	start, end = clampTime(start, from, to), clampTime(end, from, to)
	pts := w.byPID[pid]
	c0, _ := valueAt(pts, from.UnixNano())
	c3 := c0 + total
	c1, _ := valueAt(pts, w.nextPass(start).UnixNano())
	c2, _ := valueAt(pts, end.UnixNano())
	c1, c2 = min(max(c1, c0), c3), min(max(c2, c0), c3)
	during := max(c2-c1, 0)
	return Placement{Before: c1 - c0, During: during, After: c3 - c1 - during}, Covered
}

// clampTime is t within [lo, hi].
func clampTime(t, lo, hi time.Time) time.Time {
	switch {
	case t.Before(lo):
		return lo
	case t.After(hi):
		return hi
	}
	return t
}
