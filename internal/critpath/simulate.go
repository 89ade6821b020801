package critpath

import "github.com/latscope/latscope/internal/tracein"

// Model is a what-if change to a request: terms (waits, or the CPU of a
// frame) scaled (0 removes them) and pairs of terms run concurrently
// instead of one after the other.
type Model struct {
	// Scale returns the factor for a term's time; nil means 1 for all.
	Scale func(TermID) float64
	// Overlap lists pairs of term sets to run concurrently (docs/method.md §5:
	// latency − A − B + max(A, B) when independent).
	Overlap []Pair
}

// Pair is two sets of terms for an overlap.
type Pair struct{ A, B func(TermID) bool }

func (m *Model) factor(t TermID) float64 {
	if m.Scale == nil || t == NoTerm {
		return 1
	}
	return m.Scale(t)
}

// Simulate re-runs r's goroutine timelines under m and returns the predicted
// latency in nanoseconds. Runnable time, and running time without a CPU
// term, is kept, unless it goes along with one (Seg.Along); running time
// with one is scaled as a wait is; a wait ended by
// another goroutine of the request ends when that goroutine reaches the same
// point in the simulation, so removing a term on one branch of a fork lets
// the other branch become critical. Other waits (network, timers, other
// requests, transport goroutines) last their recorded length times the
// term's factor.
func Simulate(r *Request, m Model) int64 {
	var sc Scratch
	return sc.Simulate(r, m)
}

// Simulate is the package's Simulate with sc's working memory.
func (sc *Scratch) Simulate(r *Request, m Model) int64 {
	if len(r.Gs) == 0 {
		return r.Latency()
	}
	gs := resetGs(sc.gs, len(r.Gs))
	sc.gs = gs
	s := sim{r: r, m: &m, gs: gs}
	return int64(s.point(r.EndG, r.End) - r.Begin)
}

// resetGs returns gs resized to n goroutines, emptied, keeping their arrays.
func resetGs(gs []simG, n int) []simG {
	if cap(gs) < n {
		gs = append(gs[:cap(gs)], make([]simG, n-cap(gs))...)
	}
	gs = gs[:n]
	for i := range gs {
		gs[i] = simG{start: gs[i].start[:0], end: gs[i].end[:0], branch: gs[i].branch[:0]}
	}
	return gs
}

type simG struct {
	start  []tracein.Time // simulated start of each segment
	end    []tracein.Time
	busy   bool
	branch []branch // overlap branches active in this goroutine
	inited bool
	origin tracein.Time
	// inOrigin is set while origin asks the creator's point: a call back
	// to origin then gets the provisional start (a cycle, see sim.cyclic).
	inOrigin bool
}

// branch is one overlap applied to a goroutine: segments of the later term
// (moved) run in parallel from the first segment of the pair (first) and
// join after the last one (last).
type branch struct {
	first, last int
	moved       func(TermID) bool
	total       tracein.Time
}

type sim struct {
	r  *Request
	m  *Model
	gs []simG
	// cyclic is set when a wait's answer depended on itself through the
	// timelines (ties): the real time, or a provisional start, was used,
	// and the result depends on the order of evaluation.
	cyclic bool
}

// point returns the simulated time of real instant t on goroutine g.
func (s *sim) point(g int32, t tracein.Time) tracein.Time {
	segs := s.r.Gs[g].Segs
	k32, ok := pointSeg(s.r, g, t)
	switch {
	case !ok:
		return t
	case k32 < 0:
		return s.origin(g) - (segs[0].Start - t)
	}
	k := int(k32)
	if !s.ensure(g, k) {
		return t // a cycle through ties in the timelines: keep the real time
	}
	sg := &s.gs[g]
	off := min(t-segs[k].Start, sg.end[k]-sg.start[k])
	return sg.start[k] + off
}

// origin returns the simulated start of goroutine g.
func (s *sim) origin(g int32) tracein.Time {
	sg := &s.gs[g]
	if sg.inited {
		if sg.inOrigin {
			s.cyclic = true
		}
		return sg.origin
	}
	sg.inited = true
	G := &s.r.Gs[g]
	sg.origin = G.Start
	if len(G.Segs) > 0 {
		sg.origin = G.Segs[0].Start
	}
	if G.Creator >= 0 {
		if sg.busy {
			s.cyclic = true
		} else {
			sg.busy, sg.inOrigin = true, true
			o := s.point(G.Creator, G.Start)
			sg = &s.gs[g]
			sg.origin = o
			sg.busy, sg.inOrigin = false, false
		}
	}
	s.initBranches(g)
	return sg.origin
}

// ensure simulates g's segments up to and including k.
func (s *sim) ensure(g int32, k int) bool {
	sg := &s.gs[g]
	if k < len(sg.end) {
		return true
	}
	if sg.busy {
		s.cyclic = true
		return false
	}
	t := s.origin(g)
	sg.busy = true
	if n := len(sg.end); n > 0 {
		t = sg.end[n-1]
	}
	for i := len(sg.end); i <= k; i++ {
		t = s.segment(g, i, t)
	}
	sg.busy = false // (not deferred: a defer per call cost more than the loop on short timelines)
	return true
}

// segment simulates segment i of g starting at t and returns its end.
func (s *sim) segment(g int32, i int, t tracein.Time) tracein.Time {
	sg := &s.gs[g]
	seg := &s.r.Gs[g].Segs[i]
	f := 1.0 // factor's answer with no Scale (Removals' reference), without finding the subject
	if s.m.Scale != nil {
		f = s.m.factor(seg.SimSubject())
	}
	var end tracein.Time
	switch {
	case s.r.endedByMember(g, seg):
		end = t
		if f != 0 {
			end = max(t, s.point(seg.Waker, seg.End))
			if seg.JoinAll {
				end = max(end, s.joined(g, seg))
			}
		}
	default:
		d := tracein.Time(float64(seg.End-seg.Start) * f)
		for j := range sg.branch {
			b := &sg.branch[j]
			if t := seg.SimSubject(); i >= b.first && i <= b.last && t != NoTerm && b.moved(t) {
				b.total += d
				d = 0
			}
		}
		end = t + d
	}
	for j := range sg.branch {
		if b := &sg.branch[j]; i == b.last {
			firstStart := t
			if b.first < i {
				firstStart = sg.start[b.first]
			}
			end = max(end, firstStart+b.total)
		}
	}
	sg.start = append(sg.start, t)
	sg.end = append(sg.end, end)
	return end
}

// joined returns the simulated time by which every goroutine that g started
// before a JoinAll wait and that ended while it waited is done: the others
// a WaitGroup or errgroup waits for besides the one whose wake-up the trace
// recorded.
func (s *sim) joined(g int32, seg *Seg) tracein.Time {
	var end tracein.Time
	for h := range s.r.Gs {
		if last, ok := joinedEnd(s.r, g, int32(h), seg); ok {
			end = max(end, s.point(int32(h), last))
		}
	}
	return end
}

// initBranches finds, for each overlap pair present on g, the segment range
// from the first to the last wait of either term.
func (s *sim) initBranches(g int32) {
	segs := s.r.Gs[g].Segs
	for _, p := range s.m.Overlap {
		first, last := -1, -1
		var firstIsA, sawA, sawB bool
		for i := range segs {
			t := segs[i].SimSubject()
			if t == NoTerm || segs[i].IsJoin() {
				continue
			}
			a, b := p.A(t), p.B(t)
			if !a && !b {
				continue
			}
			if first < 0 {
				first, firstIsA = i, a
			}
			last = i
			sawA, sawB = sawA || a, sawB || b
		}
		if !sawA || !sawB {
			continue
		}
		moved := p.B
		if !firstIsA {
			moved = p.A
		}
		s.gs[g].branch = append(s.gs[g].branch, branch{first: first, last: last, moved: moved})
	}
}
