package critpath

import "github.com/latscope/latscope/internal/tracein"

// Removals answers, for one request, what Simulate gives with a single
// term removed (its factor 0, every other term's 1, no overlap), for every
// term of the request at once. The fix column asks it of every term on
// every request's critical path.
//
// Begin runs Simulate's recursion once, with each simulated time a vector
// that holds one time per term of the request (that term removed) and one
// for the reference (nothing removed). A segment of term t ends where it
// starts in t's component and lasts its length in the others; a wait
// another request goroutine ended ends, in each component, at the later of
// its start and that goroutine's point in the same component (in t's own
// component, for a wait of t, at its start: a removed wait reads no
// waker); a point inside a segment is its start plus the real offset, at
// most its end. Each component is thus exactly what Simulate computes for
// its removal, from the same integer nanoseconds.
//
// The reference's recursion visits every segment a removal's does: a
// point's segment depends only on real times, and a removal only drops
// the waker a removed wait would read. So when the reference met no
// cycle (a wait that depends on itself through ties in the timelines,
// where Simulate keeps the real time and the result depends on the order
// of evaluation), neither does any removal, and each component is exact.
// After a cycle, or when the vectors would take more memory than
// maxCells, each term is simulated whole. TestRemovalsExact compares
// Latency with Simulate on every term of random requests, budget's
// TestFixShortcutExact the fix columns on kept recordings.
//
// The zero value is ready to use; reuse one across requests.
type Removals struct {
	exact  bool // the vectors were computed (no cycle, within maxCells)
	all    bool // every term of the request has a component
	refEnd tracein.Time
	// rows, by TermID: the term's component plus one (0: not in the
	// request); rowTerms are the terms set, to clear at the next Begin.
	rows     []int32
	rowTerms []TermID
	w        int            // components: the request's terms, then the reference
	lat      []tracein.Time // each term's simulated end, by component

	// the vector simulation
	r      *Request
	vs     []vecG
	arena  []tracein.Time // the vectors, w times each
	cyclic bool
	over   bool // the arena would pass maxCells: the answers are discarded

	gs []simG // whole simulations
	// whole: the term a whole simulation removes, and its model (factor 0
	// for it, 1 for every other term)
	wholeTerm  TermID
	wholeModel Model

	// Count, when set, makes Counts count the segments simulated.
	Count              bool
	sims, visits       int64
	refSims, refVisits int64 // of which the vector simulations'
}

// vecG is one goroutine's state in the vector simulation: as simG, with
// each time a vector.
type vecG struct {
	ends     []vref // each segment's simulated end, in order
	origin   vref
	inited   bool
	busy     bool
	inOrigin bool // origin is asking the creator's point
}

// vref is a vector of simulated times: component c is arena[o+c] + a. A
// plain segment (of no term) moves every component by its length, which
// changes a alone; offset 0 of the arena is a vector of zeros, so that a
// time the same in every component takes no arena.
type vref struct {
	o int32
	a tracein.Time
}

// maxCells bounds the vector simulation's memory, in times: a request
// whose vectors would take more (estimated from its segments and
// goroutines times its terms before it starts, checked at each vector
// after) is simulated whole per term (which takes the request's size,
// whatever its terms). The estimate alone is no bound: a JoinAll wait
// takes up to three vectors and a joined goroutine's point a fourth.
var maxCells = 1 << 22

// removeNothing is the reference's model.
var removeNothing Model

// Begin computes the removals of request r, which must not change until
// the next Begin: of the terms listed, or of every term of the request
// when terms is nil. (Each term is a component of every vector: the fix
// column lists the terms it will ask. Latency simulates a term not listed
// whole.)
func (x *Removals) Begin(r *Request, terms []TermID) {
	for _, t := range x.rowTerms {
		x.rows[t] = 0
	}
	x.rowTerms = x.rowTerms[:0]
	x.r, x.exact, x.all = r, false, terms == nil
	n := len(r.Gs)
	if n == 0 {
		return
	}
	for _, t := range terms {
		if t != NoTerm && x.rowOf(t) == 0 {
			x.setRow(t, int32(len(x.rowTerms)))
		}
	}
	cells := n
	for g := range r.Gs {
		segs := r.Gs[g].Segs
		cells += len(segs)
		if !x.all {
			continue
		}
		last := NoTerm
		for i := range segs {
			if t := segs[i].SimSubject(); t != NoTerm && t != last {
				if x.rowOf(t) == 0 {
					x.setRow(t, int32(len(x.rowTerms)))
				}
				last = t
			}
		}
	}
	x.w = len(x.rowTerms) + 1
	if cells*x.w*2 > maxCells { // (points read take about as many as the segments)
		return
	}
	if cap(x.vs) < n {
		x.vs = make([]vecG, n)
	}
	x.vs = x.vs[:n]
	for g := range x.vs {
		x.vs[g] = vecG{ends: x.vs[g].ends[:0]}
	}
	x.arena = append(x.arena[:0], make([]tracein.Time, x.w)...) // the zeros
	x.cyclic, x.over = false, false
	end := x.point(r.EndG, r.End)
	x.refSims++
	x.sims++
	if x.Count {
		for g := range x.vs {
			x.refVisits += int64(len(x.vs[g].ends))
			x.visits += int64(len(x.vs[g].ends))
		}
	}
	if x.cyclic || x.over {
		return
	}
	x.exact = true
	x.lat = x.lat[:0]
	for _, v := range x.vec(end.o) {
		x.lat = append(x.lat, v+end.a)
	}
	x.refEnd = x.lat[x.w-1]
}

// rowOf returns term t's component plus one, 0 when the request has no
// segment of t.
func (x *Removals) rowOf(t TermID) int32 {
	if t < 0 || int(t) >= len(x.rows) {
		return 0
	}
	return x.rows[t]
}

// setRow gives term t (not NoTerm) its component.
func (x *Removals) setRow(t TermID, row int32) {
	if int(t) >= len(x.rows) {
		x.rows = append(x.rows, make([]int32, max(int(t)+1, 2*len(x.rows), 64)-len(x.rows))...)
	}
	x.rows[t] = row + 1
	x.rowTerms = append(x.rowTerms, t)
}

// Latency returns the latency Simulate predicts for request r with term t
// removed; r is the request of the last Begin.
func (x *Removals) Latency(r *Request, t TermID) int64 {
	if len(r.Gs) == 0 {
		return r.Latency()
	}
	if !x.exact {
		return x.whole(r, t)
	}
	if row := x.rowOf(t) - 1; row >= 0 {
		return int64(x.lat[row] - r.Begin)
	}
	if !x.all {
		return x.whole(r, t)
	}
	return int64(x.refEnd - r.Begin) // not in the request: nothing changes
}

// vec returns the vector at offset o of the arena.
func (x *Removals) vec(o int32) []tracein.Time { return x.arena[o : int(o)+x.w] }

// same returns the vector whose every component is t.
func same(t tracein.Time) vref { return vref{0, t} }

// alloc returns the offset of a new vector, its components to be written.
// Past maxCells it sets over and returns the zeros' offset, whose writes
// then spoil only answers Begin discards.
func (x *Removals) alloc() int32 {
	if x.full() {
		return 0
	}
	o := len(x.arena)
	x.arena = append(x.arena, x.arena[:x.w]...) // (the zeros: any w values would do)
	return int32(o)
}

// copyOf returns the offset of a new vector holding v's components less
// v.a, for a vref with v.a kept.
func (x *Removals) copyOf(v vref) int32 {
	if x.full() {
		return 0
	}
	o := len(x.arena)
	x.arena = append(x.arena, x.arena[v.o:int(v.o)+x.w]...)
	return int32(o)
}

// full reports whether a new vector would take the arena past maxCells,
// setting over when it would.
func (x *Removals) full() bool {
	if len(x.arena)+x.w > maxCells {
		x.over = true
	}
	return x.over
}

// point is sim.point in every component.
func (x *Removals) point(g int32, t tracein.Time) vref {
	r := x.r
	segs := r.Gs[g].Segs
	k, ok := pointSeg(r, g, t)
	switch {
	case !ok:
		return same(t)
	case k < 0:
		o := x.origin(g)
		o.a -= segs[0].Start - t
		return o
	}
	if !x.ensure(g, int(k)) {
		return same(t) // a cycle: keep the real time
	}
	vg := &x.vs[g]
	s, e := vg.origin, vg.ends[k]
	if k > 0 {
		s = vg.ends[k-1]
	}
	// s + min(d, e - s), component by component (sim.point); a plain
	// segment's components last its length, its term's none.
	d := t - segs[k].Start
	seg := &segs[k]
	if l := seg.End - seg.Start; l >= 0 && !x.r.endedByMember(g, seg) {
		row := x.rowOf(seg.SimSubject()) - 1
		switch {
		case row < 0:
			return vref{s.o, s.a + min(d, l)}
		case d <= 0:
			return vref{s.o, s.a + d}
		case d >= l:
			return e
		}
		o := x.copyOf(s)
		x.arena[o+row] -= d
		return vref{o, s.a + d}
	}
	out := x.alloc()
	ov, sv, ev := x.vec(out), x.vec(s.o), x.vec(e.o)
	for c := range ov {
		ov[c] = min(sv[c]+s.a+d, ev[c]+e.a)
	}
	return vref{out, 0}
}

// origin is sim.origin in every component.
func (x *Removals) origin(g int32) vref {
	vg := &x.vs[g]
	if vg.inited {
		if vg.inOrigin {
			x.cyclic = true
		}
		return vg.origin
	}
	vg.inited = true
	G := &x.r.Gs[g]
	start := G.Start
	if len(G.Segs) > 0 {
		start = G.Segs[0].Start
	}
	vg.origin = same(start)
	if G.Creator >= 0 {
		if vg.busy {
			x.cyclic = true
		} else {
			vg.busy, vg.inOrigin = true, true
			o := x.point(G.Creator, G.Start)
			vg = &x.vs[g]
			vg.origin = o
			vg.busy, vg.inOrigin = false, false
		}
	}
	return vg.origin
}

// ensure simulates g's segments up to and including k in every component.
func (x *Removals) ensure(g int32, k int) bool {
	vg := &x.vs[g]
	if k < len(vg.ends) {
		return true
	}
	if vg.busy {
		x.cyclic = true
		return false
	}
	t := x.origin(g)
	vg = &x.vs[g]
	vg.busy = true
	if n := len(vg.ends); n > 0 {
		t = vg.ends[n-1]
	}
	for i := len(vg.ends); i <= k; i++ {
		t = x.segment(g, i, t)
		x.vs[g].ends = append(x.vs[g].ends, t)
	}
	x.vs[g].busy = false
	return true
}

// segment simulates segment i of g, starting at t, in every component,
// and returns its end.
func (x *Removals) segment(g int32, i int, t vref) vref {
	r := x.r
	seg := &r.Gs[g].Segs[i]
	row := x.rowOf(seg.SimSubject()) - 1
	if !x.r.endedByMember(g, seg) {
		d := seg.End - seg.Start
		if row < 0 {
			return vref{t.o, t.a + d}
		}
		o := x.copyOf(t)
		x.arena[o+row] -= d
		return vref{o, t.a + d}
	}
	p := x.point(seg.Waker, seg.End)
	j, join := vref{}, false
	if seg.JoinAll {
		j, join = x.joined(g, seg)
	}
	out := x.alloc()
	ov, sv, pv := x.vec(out), x.vec(t.o), x.vec(p.o)
	for c := range ov {
		ov[c] = max(sv[c]+t.a, pv[c]+p.a)
	}
	if join {
		for c, v := range x.vec(j.o) {
			ov[c] = max(ov[c], v+j.a)
		}
	} else if seg.JoinAll { // sim.joined's 0
		for c := range ov {
			ov[c] = max(ov[c], 0)
		}
	}
	if row >= 0 { // the wait removed: it ends where it starts
		ov[row] = sv[row] + t.a
	}
	return vref{out, 0}
}

// joined is sim.joined in every component; false when it reads no
// goroutine (sim.joined's 0).
func (x *Removals) joined(g int32, seg *Seg) (vref, bool) {
	var out int32 = -1
	for h := range x.r.Gs {
		last, ok := joinedEnd(x.r, g, int32(h), seg)
		if !ok {
			continue
		}
		p := x.point(int32(h), last)
		if out < 0 {
			out = x.alloc()
			for c, v := range x.vec(p.o) {
				x.arena[int(out)+c] = v + p.a
			}
			continue
		}
		for c, v := range x.vec(p.o) {
			x.arena[int(out)+c] = max(x.arena[int(out)+c], v+p.a)
		}
	}
	return vref{out, 0}, out >= 0
}

// joinedEnd returns the end of goroutine h when sim.joined waits for it at
// g's wait seg.
func joinedEnd(r *Request, g, h int32, seg *Seg) (tracein.Time, bool) {
	H := &r.Gs[h]
	if H.Creator != g || !H.Committed || H.Start > seg.Start || len(H.Segs) == 0 {
		return 0, false
	}
	last := H.Segs[len(H.Segs)-1].End
	return last, last > seg.Start && last <= seg.End
}

// pointSeg returns the segment of h whose simulated times sim.point(h, t)
// reads (-1: h's start), as sim.point finds it; false when it reads
// nothing simulated.
func pointSeg(r *Request, h int32, t tracein.Time) (int32, bool) {
	segs := r.Gs[h].Segs
	k := segAt(segs, t)
	if k < 0 {
		if len(segs) > 0 && t <= segs[0].Start {
			return -1, true
		}
		k = len(segs) - 1
		if k < 0 {
			return 0, false
		}
	}
	return int32(k), true
}

// whole simulates the removal of t from the start.
func (x *Removals) whole(r *Request, t TermID) int64 {
	x.gs = resetGs(x.gs, len(r.Gs))
	x.wholeTerm = t
	if x.wholeModel.Scale == nil { // built once: it reads wholeTerm
		x.wholeModel.Scale = func(u TermID) float64 {
			if u == x.wholeTerm {
				return 0
			}
			return 1
		}
	}
	s := sim{r: r, m: &x.wholeModel, gs: x.gs}
	end := s.point(r.EndG, r.End)
	x.sims++
	if x.Count {
		x.visits += simulated(x.gs)
	}
	return int64(end - r.Begin)
}

// simulated returns the number of segments simulated in gs.
func simulated(gs []simG) int64 {
	var n int64
	for i := range gs {
		n += int64(len(gs[i].end))
	}
	return n
}

// Counts returns the simulations x has run and, when Count was set, the
// segments they simulated; refs and refSegments are those of the vector
// simulations of Begin (each segment counted once, whatever the request's
// terms), included in sims and segments.
func (x *Removals) Counts() (sims, segments, refs, refSegments int64) {
	return x.sims, x.visits, x.refSims, x.refVisits
}

// Simulated returns the segments the last Simulate of sc simulated.
func (sc *Scratch) Simulated() int64 { return simulated(sc.gs) }
