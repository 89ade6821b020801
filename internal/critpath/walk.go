package critpath

import (
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// PathSeg is one piece of a critical path.
type PathSeg struct {
	Start, End tracein.Time
	G          tracein.GoID // the goroutine whose time this was
	Kind       frame.Kind   // what G was doing
	// Term is the request-side term the time belongs to: the wait's own term,
	// or for time spent in a borrowed goroutine, the term of the request
	// goroutine's wait that it explains. NoTerm for running/runnable time of
	// request goroutines.
	Term TermID
	// CPU and From: for running time of a request goroutine given an
	// application frame, that frame's CPU term and how it was decided
	// (Seg.CPU); From is CPUNone otherwise.
	CPU  TermID
	From CPUFrom
	// Stack is the request-side blocking stack of Term (NoStack for running
	// and runnable time of request goroutines).
	Stack tracein.StackID
	// Borrowed is set for time on a goroutine outside the request; Kind is
	// then the root cause (network, running, …) under Term.
	Borrowed bool
	// Contention is set when the wait was ended by another request.
	Contention bool
	// Unknown is set for time the timelines cannot explain (it still counts,
	// so the path sums to the latency, and is reported as unexplained).
	Unknown bool
	// Cause, for borrowed time, is G's own blocking stack when G was
	// waiting or in a syscall (NoStack when it ran): the root cause's frame.
	Cause tracein.StackID
	// Via are the goroutines outside the request between the request-side
	// wait and G, nearest the request first, each with the kind of its own
	// wait that G's time explains; Hops is how many (0 when G itself ended
	// the request's wait).
	Via  [MaxHops - 1]Hop
	Hops uint8
	// along: the timeline segment's (Seg.Along), plus one; 0 for none.
	along int32
}

// Along returns the CPU term the running or runnable time of this piece
// went along with (Seg.Along), or NoTerm.
func (p *PathSeg) Along() TermID { return TermID(p.along - 1) }

// Hop is one goroutine in a chain of hand-offs: its id and what it was
// waiting for.
type Hop struct {
	G    tracein.GoID
	Kind frame.Kind
}

// Dur returns the piece's length in nanoseconds.
func (p *PathSeg) Dur() int64 { return int64(p.End - p.Start) }

// Subject returns the term a what-if acts on for this piece: Term, or for
// running time given a frame its CPU term; NoTerm for neither.
func (p *PathSeg) Subject() TermID {
	if p.Term == NoTerm && p.From != CPUNone {
		return p.CPU
	}
	return p.Term
}

// walkFrame is one level of the walk: a request goroutine, or a borrowed
// timeline explaining a wait of the level below.
type walkFrame struct {
	g     int32 // request goroutine index (when segs == nil)
	segs  []Seg // borrowed timeline
	id    tracein.GoID
	term  TermID // request-side term of a borrowed timeline
	stack tracein.StackID
	kind  frame.Kind
	lb    tracein.Time // the walk returns to the level below at lb
	// via and hops: the borrowed goroutines below this one in a chain of
	// hand-offs (PathSeg.Via).
	via  [MaxHops - 1]Hop
	hops uint8
	// at is the segment the last step on a borrowed timeline found
	// (segAtFrom's hint), 0 at first; a request goroutine's is the
	// walker's (walker.at), shared by its frames.
	at int32
}

// Walk returns the critical path of r, latest piece first. The pieces tile
// [Begin, End] exactly: their durations sum to the latency.
func Walk(r *Request) []PathSeg {
	var sc Scratch
	return sc.Walk(r)
}

// Walk is the package's Walk with sc's working memory: the returned path is
// valid until sc is used again.
func (sc *Scratch) Walk(r *Request) []PathSeg {
	w := walker{r: r, now: r.End, path: sc.path[:0], stack: sc.stack[:0], at: sc.at[:0]}
	defer func() { sc.path, sc.stack, sc.at = w.path, w.stack, w.at }()
	for i := range r.Gs { // the walk begins at the end
		w.at = append(w.at, int32(len(r.Gs[i].Segs)-1))
	}
	w.stack = append(w.stack, walkFrame{g: r.EndG, lb: r.Begin})
	limit := 1000
	for i := range r.Gs {
		limit += 4 * len(r.Gs[i].Segs)
	}
	for _, b := range r.Borrows {
		limit += 4 * len(b.Segs)
	}
	for steps := 0; len(w.stack) > 0; steps++ {
		if steps > limit { // inconsistent timelines: never loop forever
			w.add(PathSeg{Start: r.Begin, End: w.now, Kind: frame.Other, Term: NoTerm, Unknown: true})
			break
		}
		top := &w.stack[len(w.stack)-1]
		switch {
		case w.now <= top.lb:
			w.stack = w.stack[:len(w.stack)-1]
		case top.segs != nil:
			w.stepBorrowed(top)
		default:
			w.step(top)
		}
	}
	return w.path
}

type walker struct {
	r     *Request
	now   tracein.Time
	stack []walkFrame
	path  []PathSeg
	at    []int32 // by request goroutine: the segment its last step found
}

func (w *walker) add(p PathSeg) {
	if p.End > p.Start {
		w.path = append(w.path, p)
	}
	w.now = p.Start
}

// step explains time just before w.now on a request goroutine.
func (w *walker) step(top *walkFrame) {
	g := &w.r.Gs[top.g]
	i := segAtFrom(g.Segs, w.now, &w.at[top.g])
	if i < 0 {
		w.gap(top, g)
		return
	}
	s := &g.Segs[i]
	from := max(s.Start, top.lb)
	if s.Waker >= 0 && s.Waker != top.g {
		wk := &w.r.Gs[s.Waker]
		if wk.Committed {
			w.stack = append(w.stack, walkFrame{g: s.Waker, lb: from})
		} else { // a pooled goroutine the request created: its time is not the request's
			w.stack = append(w.stack, walkFrame{segs: wk.Segs, id: wk.ID, term: s.Term, stack: s.Stack, kind: s.Kind, lb: from})
		}
		return
	}
	if s.Borrow >= 0 {
		b := &w.r.Borrows[s.Borrow]
		w.stack = append(w.stack, walkFrame{segs: b.Segs, id: b.ID, term: s.Term, stack: s.Stack, kind: s.Kind, lb: from})
		return
	}
	// As add does, but built in place: a PathSeg is 112 bytes, and a
	// literal passed to add was copied twice.
	if w.now > from {
		w.path = append(w.path, PathSeg{})
		p := &w.path[len(w.path)-1]
		p.Start, p.End, p.G, p.Kind, p.Term, p.CPU, p.From = from, w.now, g.ID, s.Kind, s.Term, s.CPU, s.From
		p.Stack, p.Contention, p.along = s.Stack, s.Contention, s.along
	}
	w.now = from
}

// gap handles w.now outside g's segments: before a created goroutine's first
// segment the walk continues in its creator; anything else is unexplained.
func (w *walker) gap(top *walkFrame, g *G) {
	prevEnd := tracein.Time(-1 << 62)
	for j := len(g.Segs) - 1; j >= 0; j-- {
		if g.Segs[j].End < w.now {
			prevEnd = g.Segs[j].End
			break
		}
	}
	switch {
	case prevEnd > top.lb:
		w.add(PathSeg{Start: prevEnd, End: w.now, G: g.ID, Kind: frame.Other, Term: NoTerm, Unknown: true})
	case g.Creator >= 0:
		if start := max(g.Start, top.lb); start < w.now {
			w.add(PathSeg{Start: start, End: w.now, G: g.ID, Kind: frame.Other, Term: NoTerm, Unknown: true})
		}
		top.g = g.Creator
	default:
		w.add(PathSeg{Start: top.lb, End: w.now, G: g.ID, Kind: frame.Other, Term: NoTerm, Unknown: true})
	}
}

// stepBorrowed explains time just before w.now from a borrowed timeline: a
// goroutine outside the request whose time is charged to the request-side term.
func (w *walker) stepBorrowed(top *walkFrame) {
	i := segAtFrom(top.segs, w.now, &top.at)
	if i < 0 { // history ran out: the rest of the wait is the waiting goroutine's own
		p := PathSeg{Start: top.lb, End: w.now, G: top.id, Kind: top.kind, Term: top.term, Stack: top.stack, Borrowed: true}
		if top.hops > 0 { // the goroutine below in the chain waited: its wait, on it
			p.G, p.Via, p.Hops = top.via[top.hops-1].G, top.via, top.hops-1
			p.Via[p.Hops] = Hop{}
		}
		w.add(p)
		return
	}
	s := &top.segs[i]
	from := max(s.Start, top.lb)
	if s.Waker >= 0 && w.r.Gs[s.Waker].Committed {
		w.stack = append(w.stack, walkFrame{g: s.Waker, lb: from})
		return
	}
	if s.Borrow >= 0 && int(top.hops) < MaxHops-1 { // a hand-off behind this one: follow it
		b := &w.r.Borrows[s.Borrow]
		next := walkFrame{segs: b.Segs, id: b.ID, term: top.term, stack: top.stack, kind: s.Kind, lb: from, via: top.via, hops: top.hops + 1}
		next.via[top.hops] = Hop{G: top.id, Kind: s.Kind}
		w.stack = append(w.stack, next)
		return
	}
	p := PathSeg{Start: from, End: w.now, G: top.id, Kind: s.Kind, Term: top.term, Stack: top.stack, Borrowed: true, Contention: s.Contention,
		Via: top.via, Hops: top.hops}
	if s.Kind.IsWait() {
		p.Cause = s.Stack
	}
	w.add(p)
}
