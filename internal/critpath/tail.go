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
// request's critical path (through a Tail, which keeps its answer in
// arrays rather than a map).
func TailGains(r *Request, gains map[TermID]int64) map[TermID]int64 {
	if gains == nil {
		gains = map[TermID]int64{}
	}
	clear(gains)
	var x Tail
	x.Find(r)
	for _, t := range x.terms {
		if g, ok := x.Gain(t); ok {
			gains[t] = g
		}
	}
	return gains
}

// Tail is TailGains' answer for one request, by TermID. The zero value is
// ready to use; reuse one across requests.
type Tail struct {
	gain  []int64     // by TermID: the term's length in the tail
	state []tailState // by TermID
	terms []TermID    // the terms whose state is set, to reset
}

type tailState uint8

const (
	tailNone  tailState = iota // not in the tail
	tailOnly                   // in the tail alone: Gain knows it
	tailOther                  // in the tail and elsewhere: to simulate
)

// Find finds the terms TailGains answers for r, replacing the answer for
// the request before.
func (x *Tail) Find(r *Request) {
	for _, t := range x.terms {
		x.gain[t], x.state[t] = 0, tailNone
	}
	x.terms = x.terms[:0]
	if r.EndG < 0 || int(r.EndG) >= len(r.Gs) {
		return
	}
	segs := r.Gs[r.EndG].Segs
	last := -1 // the last wait another request goroutine ended
	for i := range segs {
		if r.endedByMember(r.EndG, &segs[i]) {
			last = i
		}
	}
	only := 0 // terms in state tailOnly
	for i := last + 1; i < len(segs); i++ {
		t := segs[i].SimSubject()
		if t == NoTerm {
			continue
		}
		if int(t) >= len(x.state) {
			n := max(int(t)+1, 2*len(x.state), 64)
			x.gain = append(x.gain, make([]int64, n-len(x.gain))...)
			x.state = append(x.state, make([]tailState, n-len(x.state))...)
		}
		if x.state[t] == tailNone {
			x.state[t] = tailOnly
			x.terms = append(x.terms, t)
			only++
		}
		x.gain[t] += segs[i].Dur()
	}
	// A term with a segment anywhere else needs the simulation.
	for g := range r.Gs {
		gsegs := r.Gs[g].Segs
		n := len(gsegs)
		if int32(g) == r.EndG {
			n = last + 1
		}
		for i := 0; i < n && only > 0; i++ {
			if t := gsegs[i].SimSubject(); t != NoTerm && int(t) < len(x.state) && x.state[t] == tailOnly {
				x.state[t] = tailOther
				only--
			}
		}
	}
}

// Gain returns what removing term t saves, when Find could tell.
func (x *Tail) Gain(t TermID) (int64, bool) {
	if t < 0 || int(t) >= len(x.state) || x.state[t] != tailOnly {
		return 0, false
	}
	return x.gain[t], true
}
