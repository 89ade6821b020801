package critpath

import "github.com/latscope/latscope/internal/tracein"

// Removals answers, for one request, what Simulate gives with a single
// term removed (its factor 0, every other term's 1, no overlap), for as
// many terms as asked, without simulating every segment each time. The
// fix column asks it of every term on every request's critical path.
//
// Begin simulates the request once with nothing changed: the reference.
// Under a removal, a segment that is not the term's and whose wait no
// other request goroutine ended lasts what it lasts in the reference
// (end = start + its length, in integer nanoseconds), so each goroutine's
// simulated times are the reference's shifted by an offset that changes
// only at the term's segments (which take no time) and at waits another
// goroutine ended (which end at that goroutine's simulated point, as in
// Simulate). Latency computes those segments alone, each exactly as
// Simulate does, in the same dependency order, and reads every other
// point as the reference's plus the offset in force there. It also skips
// what cannot change: a segment whose causes — its goroutine's earlier
// segments and start, the points its wait and its goroutine's start read
// on other goroutines — include no segment of the term keeps the
// reference's times (per term, each goroutine's first affected segment is
// found from the term's first segment there and a fixpoint over the waits
// between goroutines).
//
// This is exact when the reference met no cycle (a wait that depends on
// itself through ties in the timelines, where Simulate keeps the real time
// and the result depends on the order of evaluation): a removal only
// drops dependencies, so its simulation meets none either, and each
// segment's simulated times are a function of its causes'. After a cycle
// each term is simulated whole. TestRemovalsExact compares Latency with
// Simulate on every term of random requests, budget's
// TestFixShortcutExact the fix columns on kept recordings.
//
// The zero value is ready to use; reuse one across requests.
type Removals struct {
	exact  bool // the reference met no cycle
	ref    []simG
	refEnd tracein.Time // the reference's simulated end
	n      int          // goroutines
	// rows, by TermID: the row of each term of the request, plus one (0:
	// not in it); rowTerms are the terms set, to clear at the next Begin
	// (a map here cost a hash per segment of a term and per removal).
	rows     []int32
	rowTerms []TermID
	occ      []int32  // every segment of each term, by row, then goroutine
	occOff   []int32  // row*n+g: where the term's segments on g start in occ
	segRow   []int32  // the row of each segment of a term, in order
	segPos   []segPos // and where it is
	waits    []int32  // each goroutine's waits another request goroutine ended
	wOff     []int32  // g: where g's start in waits
	// waitK, parallel to waits: the waker's segment the wait's end reads
	// (pointSeg; noSeg when none); originK, by goroutine: the creator's
	// segment its start reads (noSeg: none, or no creator). Found once
	// here rather than by a search per removal.
	waitK   []int32
	originK []int32
	edges   []edge
	root    int32 // the end's segment on EndG (-1: its start); rootOK false: none
	rootOK  bool

	// per term
	term TermID
	// occRow is occOff's part for the term's row: the term's segments on
	// goroutine g are occ[occRow[g]:occRow[g+1]].
	occRow []int32
	aff    []int32 // each goroutine's first affected segment
	oaff   []bool  // each goroutine's start affected
	st     []evG   // by goroutine, set up on first use (state) in each Latency
	gen    uint32  // Latency's call, to tell st set up in this one from older
	bad    bool    // a cycle or a point the reference did not simulate: simulate whole

	fallbacks int // times bad was set (tests)
	gs        []simG
	// whole: the term a whole simulation removes, and its model (factor 0
	// for it, 1 for every other term)
	wholeTerm  TermID
	wholeModel Model

	// Count, when set, makes Counts count the segments simulated (a pass
	// over the goroutines after each whole simulation).
	Count              bool
	sims, visits       int64
	refSims, refVisits int64 // of which the references
}

// evG is one goroutine's state in Latency.
type evG struct {
	gen    uint32       // the Latency call that set it up (Removals.gen)
	upto   int32        // the segments up to here are done
	cur    tracein.Time // offset from the reference after them
	d0     tracein.Time // offset of the goroutine's start
	origin uint8        // 0: not computed, 1: being computed, 2: done
	busy   bool
	wc, oc int32   // next wait, next segment of the term (indices into waits, occ)
	ev     []evSeg // the segments computed, in order
}

// segPos is a segment's place: goroutine g's segment i.
type segPos struct{ g, i int32 }

// evSeg is a segment Latency computed: its index and the offset from the
// reference after it.
type evSeg struct {
	i int32
	d tracein.Time
}

// edge: segment i of goroutine g (-1: g's start) depends on the simulated
// point on goroutine h within its segment k (-1: h's start).
type edge struct{ g, i, h, k int32 }

// maxSweeps bounds the passes over the edges that find the affected
// segments; beyond it, every segment is taken as affected (exact, as each
// is then computed as Simulate does, and it bounds Latency by the
// request's size).
var maxSweeps = 8

// removeNothing is the reference's model.
var removeNothing Model

// Begin prepares the removals of request r, which must not change until
// the next Begin.
func (x *Removals) Begin(r *Request) {
	n := len(r.Gs)
	x.n = n
	if n == 0 {
		return
	}
	x.ref = resetGs(x.ref, n)
	s := sim{r: r, m: &removeNothing, gs: x.ref}
	x.refEnd = s.point(r.EndG, r.End)
	x.counted(x.ref)
	x.refSims++
	if x.Count {
		x.refVisits += simulated(x.ref)
	}
	x.exact = !s.cyclic
	if !x.exact {
		return
	}
	for _, t := range x.rowTerms {
		x.rows[t] = 0
	}
	x.rowTerms = x.rowTerms[:0]
	// Every term's segments, grouped by term, then goroutine.
	x.occOff, x.segRow, x.segPos = x.occOff[:0], x.segRow[:0], x.segPos[:0]
	for g := range r.Gs {
		segs := r.Gs[g].Segs
		last, row := NoTerm, int32(0)
		for i := range segs {
			t := segs[i].SimSubject()
			if t == NoTerm {
				continue
			}
			if t != last {
				if row = x.rowOf(t) - 1; row < 0 {
					row = int32(len(x.occOff) / n)
					x.setRow(t, row)
					for range n {
						x.occOff = append(x.occOff, 0)
					}
				}
				last = t
			}
			x.occOff[int(row)*n+g]++
			x.segRow = append(x.segRow, row)
			x.segPos = append(x.segPos, segPos{int32(g), int32(i)})
		}
	}
	sum := int32(0)
	for i, c := range x.occOff {
		x.occOff[i] = sum
		sum += c
	}
	x.occOff = append(x.occOff, sum)
	x.occ = grow32(x.occ, int(sum))
	fill := x.aff[:0] // a cursor per row and goroutine, borrowed
	fill = append(fill, x.occOff...)
	for j, p := range x.segPos {
		c := &fill[int(x.segRow[j])*n+int(p.g)]
		x.occ[*c] = p.i
		*c++
	}
	x.aff = fill[:0]
	// The waits between goroutines, as sim.origin, sim.segment and
	// sim.joined ask them.
	x.edges, x.waits, x.wOff = x.edges[:0], x.waits[:0], x.wOff[:0]
	x.waitK, x.originK = x.waitK[:0], x.originK[:0]
	for g := range r.Gs {
		x.wOff = append(x.wOff, int32(len(x.waits)))
		G := &r.Gs[g]
		ck := int32(noSeg)
		if G.Creator >= 0 {
			if k, ok := pointSeg(r, G.Creator, G.Start); ok {
				x.edges = append(x.edges, edge{int32(g), -1, G.Creator, k})
				ck = k
			}
		}
		x.originK = append(x.originK, ck)
		for i := range G.Segs {
			seg := &G.Segs[i]
			w := seg.Waker
			if w < 0 || w == int32(g) || !r.Gs[w].Committed {
				continue
			}
			x.waits = append(x.waits, int32(i))
			wk := int32(noSeg)
			if k, ok := pointSeg(r, w, seg.End); ok {
				x.edges = append(x.edges, edge{int32(g), int32(i), w, k})
				wk = k
			}
			x.waitK = append(x.waitK, wk)
			if !seg.JoinAll {
				continue
			}
			for h := range r.Gs {
				if last, ok := joinedEnd(r, int32(g), int32(h), seg); ok {
					if k, ok := pointSeg(r, int32(h), last); ok {
						x.edges = append(x.edges, edge{int32(g), int32(i), int32(h), k})
					}
				}
			}
		}
	}
	x.wOff = append(x.wOff, int32(len(x.waits)))
	x.root, x.rootOK = pointSeg(r, r.EndG, r.End)
	if cap(x.aff) < n {
		x.aff = make([]int32, n)
	}
	if cap(x.oaff) < n {
		x.oaff = make([]bool, n)
	}
	if cap(x.st) < n {
		x.st = append(x.st[:cap(x.st)], make([]evG, n-cap(x.st))...)
	}
	x.aff, x.oaff, x.st = x.aff[:n], x.oaff[:n], x.st[:n]
}

// rowOf returns term t's row plus one, 0 when the request has no segment
// of t.
func (x *Removals) rowOf(t TermID) int32 {
	if t < 0 || int(t) >= len(x.rows) {
		return 0
	}
	return x.rows[t]
}

// setRow gives term t (not NoTerm) its row.
func (x *Removals) setRow(t TermID, row int32) {
	if int(t) >= len(x.rows) {
		x.rows = append(x.rows, make([]int32, max(int(t)+1, 2*len(x.rows), 64)-len(x.rows))...)
	}
	x.rows[t] = row + 1
	x.rowTerms = append(x.rowTerms, t)
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
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
	row := x.rowOf(t) - 1
	if row < 0 { // not in the request: nothing changes
		return int64(x.refEnd - r.Begin)
	}
	aff, oaff := x.aff, x.oaff
	x.occRow = x.occOff[int(row)*n : int(row)*n+n+1]
	for g := range aff {
		aff[g] = int32(len(r.Gs[g].Segs))
		if o := x.occRow[g]; o < x.occRow[g+1] {
			aff[g] = x.occ[o]
		}
	}
	clear(oaff)
	affected := func(h, k int32) bool {
		if k < 0 {
			return oaff[h]
		}
		return k >= aff[h]
	}
	for sweep, changed := 0, true; changed; sweep++ {
		if sweep == maxSweeps { // many chained waits: take every goroutine as affected
			for g := range aff {
				aff[g], oaff[g] = 0, r.Gs[g].Creator >= 0
			}
			break
		}
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
	x.term, x.bad = t, false
	x.gen++
	if x.gen == 0 { // wrapped: no goroutine's state may look current
		for g := range x.st {
			x.st[g].gen = 0
		}
		x.gen = 1
	}
	end := x.pointAt(r, r.EndG, r.End, x.root) // (pointSeg's answer for it, found in Begin)
	if x.bad {                                 // cannot happen after an acyclic reference; kept safe
		x.fallbacks++
		return x.whole(r, t)
	}
	x.sims++
	return int64(end - r.Begin)
}

// state returns goroutine g's state in this Latency call, set up on first
// use: most removals visit few of a request's goroutines.
func (x *Removals) state(g int32) *evG {
	st := &x.st[g]
	if st.gen == x.gen {
		return st
	}
	aff := x.aff[g]
	*st = evG{gen: x.gen, upto: aff - 1, ev: st.ev[:0]}
	if !x.oaff[g] {
		st.origin = 2
	}
	// the first wait and the first segment of the term from aff on
	st.wc = x.wOff[g]
	for st.wc < x.wOff[g+1] && x.waits[st.wc] < aff {
		st.wc++
	}
	st.oc = x.occRow[g]
	for st.oc < x.occRow[g+1] && x.occ[st.oc] < aff {
		st.oc++
	}
	return st
}

// noSeg marks no segment found (pointSeg's false) in Removals.waitK and
// originK.
const noSeg = -1 << 31

// point is sim.point under the removal.
func (x *Removals) point(r *Request, g int32, t tracein.Time) tracein.Time {
	k, ok := pointSeg(r, g, t)
	if !ok {
		k = noSeg
	}
	return x.pointAt(r, g, t, k)
}

// pointAt is point with the segment pointSeg finds for t on g, k (noSeg:
// none).
func (x *Removals) pointAt(r *Request, g int32, t tracein.Time, k int32) tracein.Time {
	segs := r.Gs[g].Segs
	switch {
	case k == noSeg:
		return t
	case k < 0:
		return x.origin(r, g) - (segs[0].Start - t)
	}
	ref := &x.ref[g]
	// ensure's answer without the call when g's state is this call's and
	// has k done (most points read were done before).
	if st := &x.st[g]; (st.gen != x.gen || k > st.upto || int(k) >= len(ref.end)) && !x.ensure(r, g, k) {
		return t
	}
	d0, d1 := x.offsets(g, k)
	start, end := ref.start[k]+d0, ref.end[k]+d1
	return start + min(t-segs[k].Start, end-start)
}

// offsets returns the offsets of goroutine g's simulated times from the
// reference's at the start and at the end of segment k, which ensure has
// done.
func (x *Removals) offsets(g, k int32) (atStart, atEnd tracein.Time) {
	st := &x.st[g]
	if n := len(st.ev); n == 0 || st.ev[n-1].i < k { // after the last computed: its offset
		if n == 0 {
			return st.d0, st.d0
		}
		return st.ev[n-1].d, st.ev[n-1].d
	}
	lo, hi := 0, len(st.ev) // the first computed segment at or after k
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if st.ev[m].i < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	atStart = st.d0
	if lo > 0 {
		atStart = st.ev[lo-1].d
	}
	if lo < len(st.ev) && st.ev[lo].i == k { // computed: the offset after it
		return atStart, st.ev[lo].d
	}
	return atStart, atStart
}

// origin is sim.origin under the removal.
func (x *Removals) origin(r *Request, g int32) tracein.Time {
	st, ref := x.state(g), &x.ref[g]
	if !ref.inited {
		x.bad = true // the reference did not need it: a removal cannot
		return 0
	}
	switch st.origin {
	case 1:
		x.bad = true
		return ref.origin
	case 0:
		st.origin = 1
		o := x.pointAt(r, r.Gs[g].Creator, r.Gs[g].Start, x.originK[g])
		st = &x.st[g]
		st.d0, st.cur, st.origin = o-ref.origin, o-ref.origin, 2
	}
	return ref.origin + st.d0
}

// ensure computes g's segments up to k that the removal can make differ
// from the reference by other than the offset before them.
func (x *Removals) ensure(r *Request, g, k int32) bool {
	st := x.state(g)
	if int(k) >= len(x.ref[g].end) { // the reference did not need it: a removal cannot
		x.bad = true
		return false
	}
	if k <= st.upto {
		return true
	}
	if st.busy {
		x.bad = true
		return false
	}
	if st.origin != 2 {
		x.origin(r, g)
		st = &x.st[g]
	}
	st.busy = true
	segs := r.Gs[g].Segs
	ref := &x.ref[g]
	wEnd, oEnd := x.wOff[g+1], x.occRow[g+1]
	for {
		i := k + 1
		if st.wc < wEnd {
			i = x.waits[st.wc]
		}
		if st.oc < oEnd {
			i = min(i, x.occ[st.oc])
		}
		if i > k {
			break
		}
		// i is a wait another request goroutine ended (sim.segment's
		// case for one) when it is in waits, and the term's (SimSubject)
		// when it is in the term's row of occ: Begin built both with
		// those tests.
		wi, ofTerm := int32(-1), false // i's index in waits, when a wait
		if st.wc < wEnd && x.waits[st.wc] == i {
			wi = st.wc
			st.wc++
		}
		if st.oc < oEnd && x.occ[st.oc] == i {
			ofTerm = true
			st.oc++
		}
		st.upto = i - 1
		t := ref.start[i] + st.cur
		end := t // a segment of the term: no time (sim.segment's factor 0)
		if wi >= 0 && !ofTerm {
			seg := &segs[i]
			end = max(t, x.pointAt(r, seg.Waker, seg.End, x.waitK[wi]))
			if seg.JoinAll {
				var j tracein.Time
				for h := range r.Gs {
					if last, ok := joinedEnd(r, g, int32(h), seg); ok {
						j = max(j, x.point(r, int32(h), last))
					}
				}
				end = max(end, j)
			}
		}
		st = &x.st[g]
		st.cur = end - ref.end[i]
		st.ev = append(st.ev, evSeg{i, st.cur})
		if x.Count {
			x.visits++
		}
	}
	st.upto, st.busy = k, false
	return true
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

// Counts returns the simulations x has run and, when Count was set, the
// segments they simulated (in Latency's, the segments it computed); refs
// and refSegments are those of the references of Begin, included in sims
// and segments.
func (x *Removals) Counts() (sims, segments, refs, refSegments int64) {
	return x.sims, x.visits, x.refSims, x.refVisits
}

// Simulated returns the segments the last Simulate of sc simulated.
func (sc *Scratch) Simulated() int64 { return simulated(sc.gs) }
