package critpath

import "github.com/latscope/latscope/internal/tracein"

// Removals answers, for one request, what Simulate gives with a single
// term removed (its factor 0, every other term's 1, no overlap), for as
// many terms as asked, simulating only what the removal can change. The
// fix column asks it of every term on every request's critical path.
//
// Begin simulates the request once with nothing changed (the reference).
// A segment whose causes — its goroutine's earlier segments and start,
// the point of the goroutine whose action ended its wait (and, for a
// join, of the others joined), the creator's point where its goroutine
// started — include no segment of the removed term has the reference's
// simulated times under the removal too: the simulation of a segment
// depends on nothing else, and the factors differ only on the term's own
// segments. Per term, the first such affected segment of each goroutine
// is found from the term's first segment there and a fixpoint over the
// waits between goroutines; the simulation starts from the reference's
// times before it. This is exact when the reference met no cycle (a wait
// that depends on itself through ties in the timelines, where Simulate
// keeps the real time and the result depends on the order of
// evaluation): removing a term only drops dependencies, so the removal's
// simulation meets none either. After a cycle, each term is simulated
// whole. TestRemovalsExact compares it with Simulate on every term of
// random requests; budget's TestFixShortcutExact on kept recordings.
//
// The zero value is ready to use; reuse one across requests.
type Removals struct {
	exact  bool // the reference met no cycle
	ref    []simG
	refEnd tracein.Time // the reference's simulated end
	row    map[TermID]int32
	first  []int32 // by row, then goroutine: the term's first segment there, or len(Segs)
	edges  []edge
	root   int32 // the end's segment on EndG (-1: its start); rootOK false: no dependency
	rootOK bool
	aff    []int32 // per term: each goroutine's first affected segment
	oaff   []bool  // per term: each goroutine's start affected
	gs     []simG

	// Count, when set, makes Counts count the segments simulated (a pass
	// over the goroutines after each simulation).
	Count        bool
	sims, visits int64
}

// edge: segment i of goroutine g (-1: g's start) depends on the simulated
// point on goroutine h within its segment k (-1: h's start).
type edge struct{ g, i, h, k int32 }

// removeNothing is the reference's model (and the model of a removal, which
// sim.factor does not consult).
var removeNothing Model

// Begin prepares the removals of request r, which must not change until
// the next Begin.
func (x *Removals) Begin(r *Request) {
	n := len(r.Gs)
	if n == 0 {
		return
	}
	x.ref = resetGs(x.ref, n)
	s := sim{r: r, m: &removeNothing, gs: x.ref}
	x.refEnd = s.point(r.EndG, r.End)
	x.counted(x.ref)
	x.exact = !s.cyclic
	if !x.exact {
		return
	}
	if x.row == nil {
		x.row = map[TermID]int32{}
	}
	clear(x.row)
	x.first = x.first[:0]
	for g := range r.Gs {
		segs := r.Gs[g].Segs
		last := NoTerm
		for i := range segs {
			t := segs[i].SimSubject()
			if t == NoTerm || t == last {
				continue // not a term, or its first segment here is earlier
			}
			last = t
			row, ok := x.row[t]
			if !ok {
				row = int32(len(x.first) / n)
				x.row[t] = row
				for h := range r.Gs {
					x.first = append(x.first, int32(len(r.Gs[h].Segs)))
				}
			}
			if p := &x.first[int(row)*n+g]; int32(i) < *p {
				*p = int32(i)
			}
		}
	}
	// The waits between goroutines, as sim.origin, sim.segment and
	// sim.joined ask them.
	x.edges = x.edges[:0]
	for g := range r.Gs {
		G := &r.Gs[g]
		if G.Creator >= 0 {
			if k, ok := pointSeg(r, G.Creator, G.Start); ok {
				x.edges = append(x.edges, edge{int32(g), -1, G.Creator, k})
			}
		}
		for i := range G.Segs {
			seg := &G.Segs[i]
			w := seg.Waker
			if w < 0 || w == int32(g) || !r.Gs[w].Committed {
				continue
			}
			if k, ok := pointSeg(r, w, seg.End); ok {
				x.edges = append(x.edges, edge{int32(g), int32(i), w, k})
			}
			if !seg.JoinAll {
				continue
			}
			for h := range r.Gs {
				H := &r.Gs[h]
				if H.Creator != int32(g) || !H.Committed || H.Start > seg.Start || len(H.Segs) == 0 {
					continue
				}
				if last := H.Segs[len(H.Segs)-1].End; last > seg.Start && last <= seg.End {
					if k, ok := pointSeg(r, int32(h), last); ok {
						x.edges = append(x.edges, edge{int32(g), int32(i), int32(h), k})
					}
				}
			}
		}
	}
	x.root, x.rootOK = pointSeg(r, r.EndG, r.End)
	if cap(x.aff) < n {
		x.aff, x.oaff = make([]int32, n), make([]bool, n)
	}
	x.aff, x.oaff = x.aff[:n], x.oaff[:n]
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

// Latency returns the latency Simulate predicts for request r with term t
// removed; r is the request of the last Begin.
func (x *Removals) Latency(r *Request, t TermID) int64 {
	n := len(r.Gs)
	if n == 0 {
		return r.Latency()
	}
	if !x.exact {
		return x.whole(r, t)
	}
	row, ok := x.row[t]
	if !ok { // not in the request: nothing changes
		return int64(x.refEnd - r.Begin)
	}
	aff, oaff := x.aff, x.oaff
	copy(aff, x.first[int(row)*n:int(row+1)*n])
	clear(oaff)
	affected := func(h, k int32) bool {
		if k < 0 {
			return oaff[h]
		}
		return k >= aff[h]
	}
	for changed := true; changed; {
		changed = false
		for _, e := range x.edges {
			if e.i < 0 && oaff[e.g] || e.i >= 0 && e.i >= aff[e.g] || !affected(e.h, e.k) {
				continue
			}
			if e.i < 0 {
				oaff[e.g], aff[e.g] = true, 0
			} else {
				aff[e.g] = e.i
			}
			changed = true
		}
	}
	if !x.rootOK || !affected(r.EndG, x.root) {
		return int64(x.refEnd - r.Begin)
	}
	x.gs = resetGs(x.gs, n)
	for g := range x.gs {
		ref, sg := &x.ref[g], &x.gs[g]
		if oaff[g] || !ref.inited {
			continue
		}
		sg.inited, sg.origin = true, ref.origin
		k := min(int(aff[g]), len(ref.end))
		sg.start, sg.end = append(sg.start, ref.start[:k]...), append(sg.end, ref.end[:k]...)
	}
	if x.Count {
		x.visits -= simulated(x.gs)
	}
	s := sim{r: r, m: &removeNothing, gs: x.gs, rm: t, removing: true}
	end := s.point(r.EndG, r.End)
	x.counted(x.gs)
	if s.cyclic { // cannot happen after an acyclic reference; kept safe
		return x.whole(r, t)
	}
	return int64(end - r.Begin)
}

// whole simulates the removal of t from the start.
func (x *Removals) whole(r *Request, t TermID) int64 {
	x.gs = resetGs(x.gs, len(r.Gs))
	s := sim{r: r, m: &removeNothing, gs: x.gs, rm: t, removing: true}
	end := s.point(r.EndG, r.End)
	x.counted(x.gs)
	return int64(end - r.Begin)
}

// counted counts a simulation that left gs.
func (x *Removals) counted(gs []simG) {
	x.sims++
	if x.Count {
		x.visits += simulated(gs)
	}
}

// simulated returns the number of segments simulated in gs.
func simulated(gs []simG) int64 {
	var n int64
	for i := range gs {
		n += int64(len(gs[i].end))
	}
	return n
}

// Counts returns the simulations x has run (the references of Begin
// included) and, when Count was set, the segments they simulated.
func (x *Removals) Counts() (sims, segments int64) { return x.sims, x.visits }

// Simulated returns the segments the last Simulate of sc simulated.
func (sc *Scratch) Simulated() int64 { return simulated(sc.gs) }
