package critpath

// TailGains sets gains, for the terms whose removal it can tell without
// simulating, to the latency removing each would save, and returns it
// (cleared first; nil makes a new map). A term qualifies when every
// segment a what-if on it acts on (SimSubject) lies on the goroutine that
// ended the request, after its last wait that another request goroutine
// ended (a join, a hand-off): from there to the end nothing waits for
// another goroutine, and nothing before depends on those segments, so
// removing the term shortens the request by exactly their length —
// what Simulate with the term's factor 0 gives, without its pass over
// every goroutine. The fix column asks this of every term on every
// request's critical path.
func TailGains(r *Request, gains map[TermID]int64) map[TermID]int64 {
	if gains == nil {
		gains = map[TermID]int64{}
	}
	clear(gains)
	if r.EndG < 0 || int(r.EndG) >= len(r.Gs) {
		return gains
	}
	segs := r.Gs[r.EndG].Segs
	last := -1 // the last wait another request goroutine ended
	for i := range segs {
		if w := segs[i].Waker; w >= 0 && w != r.EndG && r.Gs[w].Committed {
			last = i
		}
	}
	for i := last + 1; i < len(segs); i++ {
		if t := segs[i].SimSubject(); t != NoTerm {
			gains[t] += segs[i].Dur()
		}
	}
	// A term with a segment anywhere else needs the simulation.
	for g := range r.Gs {
		gsegs := r.Gs[g].Segs
		n := len(gsegs)
		if int32(g) == r.EndG {
			n = last + 1
		}
		for i := 0; i < n && len(gains) > 0; i++ {
			if t := gsegs[i].SimSubject(); t != NoTerm {
				delete(gains, t)
			}
		}
	}
	return gains
}
