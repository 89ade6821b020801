package budget

import (
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// finish closes request r at t (ender is the goroutine that ended it). It
// is booked into its group later, in the order requests end (settle), so
// that its running time is split by frame with the CPU samples taken after
// it too (cpu.go). Meanwhile its timelines wait in one compact copy, and
// its members go back to the free lists.
func (a *Analyzer) finish(r *reqState, t tracein.Time, ender *gstate) {
	if r.traced {
		a.info.TracedRequests++
	}
	if r.call { // tracelog.Call: no request
		a.info.CallTasks++
		a.discard(r, t)
		return
	}
	if !a.keep(r) { // not the trace ID asked for
		a.discard(r, t)
		return
	}
	if a.opts.TraceID != "" {
		a.matched++
	}
	endG := max(memberOf(ender, r), 0)
	a.closeMembers(r, t)
	a.rpcFinished(a.group(r.name, r.inferred), r, ender, t)
	r.closed, r.end, r.endG = true, t, endG
	// With the queue full, the oldest is booked first: its buffers are the
	// ones this request's timelines then reuse. (Booked before or after
	// this copy, it sees the same samples: both happen at this event.)
	if len(a.pending)+1-a.settled >= maxPending {
		a.settleOldest()
	}
	n, runs := 0, 0
	for _, m := range r.members {
		n += len(m.g.Segs)
		runs += len(m.runs)
	}
	b := a.spareBufs()
	r.segs, r.regs = grow(b.segs, n), grow(b.regs, n)
	r.gs, r.runs = grow(b.gs, len(r.members))[:len(r.members)], grow(b.runs, runs)
	for i, m := range r.members {
		off := len(r.segs)
		r.segs, r.regs = append(r.segs, m.g.Segs...), append(r.regs, m.regions...)
		r.gs[i] = m.g
		r.gs[i].Committed = !m.tentative
		r.gs[i].Segs = r.segs[off:len(r.segs):len(r.segs)]
		for _, run := range m.runs {
			run.seg += int32(off)
			r.runs = append(r.runs, run)
		}
	}
	a.free.release(r)
	r.members = nil
	a.pending = append(a.pending, r)
}

// settleOldest books the request that has waited longest.
func (a *Analyzer) settleOldest() {
	a.settle(a.pending[a.settled])
	a.pending[a.settled] = nil
	a.settled++
	if a.settled >= maxPending { // drop the booked ones from the queue's front
		a.pending = append(a.pending[:0], a.pending[a.settled:]...)
		a.settled = 0
	}
}

// timelineBufs are a booked request's timeline buffers, kept for the
// next request to finish (Analyzer.spare): a long trace then allocates
// them for a few requests, not for each of its hundreds of thousands.
type timelineBufs struct {
	segs []critpath.Seg
	regs []int32
	gs   []critpath.G
	runs []runRef
}

// maxSpare bounds the buffers kept.
const maxSpare = 4

// spareBufs returns kept buffers, emptied, or none.
func (a *Analyzer) spareBufs() timelineBufs {
	if len(a.spare) == 0 {
		return timelineBufs{}
	}
	b := a.spare[len(a.spare)-1]
	a.spare = a.spare[:len(a.spare)-1]
	return b
}

// grow returns s emptied, with room for n, reallocated when it has not.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// maxPending bounds the requests that wait to be booked: beyond it the
// oldest is booked with the CPU samples taken so far, those of the
// requests that ended after it included (docs/method.md §3, "CPU by
// frame"). A window of a few seconds is booked whole at its end.
const maxPending = 1024

// settleAll books every request still waiting, in the order they ended.
func (a *Analyzer) settleAll() {
	for _, r := range a.pending[a.settled:] {
		a.settle(r)
	}
	a.pending, a.settled = a.pending[:0], 0
}

// settle books a finished request into its group: its running time split
// by frame, its critical path, its predictions.
func (a *Analyzer) settle(r *reqState) {
	req := critpath.Request{Begin: r.begin, End: r.end, EndG: r.endG, Borrows: r.borrows}
	req.Gs, a.scratch.regs = a.splitRunning(r)
	a.scratch.gs = req.Gs
	a.account(a.group(r.name, r.inferred), r, &req)
	if len(a.spare) < maxSpare { // nothing refers to them once booked
		clear(r.gs) // their segments' and edges' arrays may go
		a.spare = append(a.spare, timelineBufs{r.segs, r.regs, r.gs, r.runs})
	}
	r.segs, r.regs, r.gs, r.runs = nil, nil, nil, nil
	a.spareBorrowsOf(r)
}

// maxSpareBorrowed bounds the borrowed timelines' arrays kept for reuse:
// about the borrows of the requests waiting to be booked (maxPending).
const maxSpareBorrowed = 8 * maxPending

// borrowedSegs returns an empty array for a borrowed timeline of up to n
// segments, a booked request's when one is spare. (A borrowed timeline
// is a goroutine's recent history, at most histLen intervals and its
// current one, so every array is made that large.)
func (a *Analyzer) borrowedSegs(n int) []critpath.Seg {
	if k := len(a.spareBorrowed); k > 0 && cap(a.spareBorrowed[k-1]) >= n {
		s := a.spareBorrowed[k-1]
		a.spareBorrowed = a.spareBorrowed[:k-1]
		return s
	}
	return make([]critpath.Seg, 0, max(n, histLen+1))
}

// spareBorrowsOf keeps booked request r's borrowed timelines' arrays and
// their list for reuse: nothing refers to them once booked (a kept path
// holds copies of its segments).
func (a *Analyzer) spareBorrowsOf(r *reqState) {
	for i := range r.borrows {
		if len(a.spareBorrowed) < maxSpareBorrowed {
			a.spareBorrowed = append(a.spareBorrowed, r.borrows[i].Segs[:0])
		}
		r.borrows[i] = critpath.Borrowed{}
	}
	if r.borrows != nil && len(a.spareBorrows) < maxPending {
		a.spareBorrows = append(a.spareBorrows, r.borrows[:0])
	}
	r.borrows = nil
}

// discard drops request r without booking it.
func (a *Analyzer) discard(r *reqState, t tracein.Time) {
	a.closeMembers(r, t)
	a.free.release(r)
	r.members = nil
}

// closeMembers ends the membership of every goroutine still in r.
func (a *Analyzer) closeMembers(r *reqState, t tracein.Time) {
	for _, m := range r.members {
		if !m.alive {
			continue
		}
		if g := a.gs.Get(m.g.ID); g != nil && g.req == r {
			a.leave(g, t, false)
		}
		m.alive = false
	}
}

// scratch holds per-request working sets reused across requests.
type scratch struct {
	wait    termSums
	crit    termSums
	along   termSums // critical running time along with each CPU term
	model   critpath.Model
	gs      []critpath.G     // the finishing request's timelines
	cp      critpath.Scratch // Walk and Simulate memory
	segs    []critpath.Seg   // its timelines split by frame (splitRunning)
	regions []int32          // the innermost region of each of segs
	regs    [][]int32        // regions by goroutine, parallel to gs[i].Segs
	// Fix is the fix column (its test flags, noTail, whole and count, set
	// by tests on the scratch).
	Fix
}

// termSums sums nanoseconds by term for one request: a dense array by
// TermID and the terms added to, in the order first added (a map per sum
// cost more than the rest of the bookkeeping on a dense trace).
type termSums struct {
	ns  []int64 // by TermID
	in  []bool  // by TermID: in ids
	ids []critpath.TermID
}

// add adds d to t's sum, t counting as added even when d is 0.
func (s *termSums) add(t critpath.TermID, d int64) {
	if int(t) >= len(s.ns) {
		n := max(int(t)+1, 2*len(s.ns), 64)
		s.ns = append(s.ns, make([]int64, n-len(s.ns))...)
		s.in = append(s.in, make([]bool, n-len(s.in))...)
	}
	if !s.in[t] {
		s.in[t] = true
		s.ids = append(s.ids, t)
	}
	s.ns[t] += d
}

// get returns t's sum (0 when none was added).
func (s *termSums) get(t critpath.TermID) int64 {
	if int(t) < len(s.ns) {
		return s.ns[t]
	}
	return 0
}

// reset empties the sums.
func (s *termSums) reset() {
	for _, t := range s.ids {
		s.ns[t], s.in[t] = 0, false
	}
	s.ids = s.ids[:0]
}

func (s *scratch) init() {
	s.Fix.cp = &s.cp
}

// account books one finished request.
func (a *Analyzer) account(gs *groupState, r *reqState, req *critpath.Request) {
	lat := req.Latency()
	gs.begins = append(gs.begins, req.Begin)
	sum, committed := a.waitSums(gs, r, req)
	if committed == 1 && sum > lat+lat/50 {
		gs.overfull++
	}
	path := a.scratch.cp.Walk(req)
	gs.Request(lat, committed, a.critical(gs, path))
	gs.Predict(&a.scratch.cp, req, a.opts.Predictions, a.terms.list)
	if a.opts.FixPotential {
		fx := &a.scratch.Fix
		fx.Begin(req, committed, a.scratch.crit.ids)
		for _, tid := range a.scratch.crit.ids {
			gs.term(tid).fix += fx.Gain(tid, a.scratch.crit.ns[tid]+a.scratch.along.get(tid))
		}
	}
	if r.measured {
		gs.before += r.before
		gs.beforeN++
	}
	gs.samples += r.samples
	for id, n := range r.regionCPU {
		gs.region(id).cpu += n
	}
	for st, n := range r.stackCPU {
		gs.cpuStacks[st] += n
	}
	gs.keepPath(r, req, path, a.opts.PathSamples)
	gs.keepSlow(r, lat)
	if a.opts.Each != nil {
		p := &Path{Task: r.task, TraceID: r.traceID, Begin: req.Begin, End: req.End, Latency: lat, Goroutines: committed, Segs: path}
		a.opts.Each(gs.name, p)
	}
}

// waitSums adds the goroutine time of r's committed goroutines to gs and
// returns its total and the number of committed goroutines.
func (a *Analyzer) waitSums(gs *groupState, r *reqState, req *critpath.Request) (sum int64, committed int) {
	a.scratch.wait.reset()
	for i := range req.Gs {
		g := &req.Gs[i]
		if !g.Committed {
			continue
		}
		committed++
		for j := range g.Segs {
			s := &g.Segs[j]
			d := s.Dur()
			sum += d
			gs.region(a.scratch.regs[i][j]).wall += d
			switch s.Kind {
			case frame.Running:
				gs.running += d
				if s.From != critpath.CPUNone { // the CPU of a frame (cpu.go)
					a.scratch.wait.add(s.CPU, d)
					gs.cpuFrom[s.From] += d
				}
			case frame.Runnable:
				gs.runnable += d
			default:
				a.scratch.wait.add(s.Term, d)
				gs.stack(s.Stack, s.Kind).wait += d
			}
		}
	}
	for _, tid := range a.scratch.wait.ids {
		ts := gs.term(tid)
		ts.wait += a.scratch.wait.ns[tid]
		ts.requests++
	}
	return sum, committed
}

// critical adds a request's critical path to gs and returns its length.
func (a *Analyzer) critical(gs *groupState, path []critpath.PathSeg) (sum int64) {
	a.scratch.crit.reset()
	a.scratch.along.reset()
	for i := range path {
		p := &path[i] // not a copy: a PathSeg is 112 bytes
		d := p.Dur()
		sum += d
		switch {
		case p.Unknown:
			gs.Unknown += d
		case p.Term == critpath.NoTerm && p.Kind == frame.Running:
			gs.critRunning += d
			if p.From != critpath.CPUNone { // the CPU of a frame (cpu.go)
				a.scratch.crit.add(p.CPU, d)
				gs.critCPU += d
			} else if t := p.Along(); t != critpath.NoTerm { // plain, along with a frame's CPU
				a.scratch.along.add(t, d)
				gs.term(t).along += d
			}
		case p.Term == critpath.NoTerm:
			gs.critRunnable += d
			if t := p.Along(); t != critpath.NoTerm { // a preemption inside a frame's CPU (cpu.go)
				a.scratch.along.add(t, d)
				gs.term(t).along += d
				gs.term(t).alongRunnable += d
			}
		default:
			a.scratch.crit.add(p.Term, d)
			gs.stack(p.Stack, p.Kind).crit += d
			ts := gs.term(p.Term)
			ts.causes[p.Kind] += d
			if p.Borrowed && p.Cause != tracein.NoStack {
				if ts.roots == nil {
					ts.roots = map[rootKey]*rootAcc{}
				}
				k := rootKey{p.Cause, p.Kind}
				ra := ts.roots[k]
				if ra == nil {
					ra = &rootAcc{}
					ts.roots[k] = ra
				}
				ra.crit += d
				ra.hops = max(ra.hops, p.Hops)
			}
			if p.Contention {
				ts.contention += d
			}
		}
	}
	for _, tid := range a.scratch.crit.ids {
		ts := gs.term(tid)
		ts.crit += a.scratch.crit.ns[tid]
		ts.critRequests++
	}
	return sum
}

// hasJoin reports whether any wait of req was ended by another goroutine
// of the request.
func hasJoin(req *critpath.Request) bool {
	for i := range req.Gs {
		if !req.Gs[i].Committed {
			continue
		}
		for j := range req.Gs[i].Segs {
			if req.Gs[i].Segs[j].Waker >= 0 {
				return true
			}
		}
	}
	return false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
