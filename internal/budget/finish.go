package budget

import (
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// finish closes request r at t (ender is the goroutine that ended it) and
// books it into its group.
func (a *Analyzer) finish(r *reqState, t tracein.Time, ender *gstate) {
	endG := max(memberOf(ender, r), 0)
	a.closeMembers(r, t)
	req := critpath.Request{Begin: r.begin, End: t, EndG: endG, Borrows: r.borrows}
	req.Gs = a.scratch.gs[:0]
	for _, m := range r.members {
		g := m.g
		g.Committed = !m.tentative
		req.Gs = append(req.Gs, g)
	}
	a.scratch.gs = req.Gs
	gs := a.group(r.name, r.inferred)
	a.rpcFinished(gs, r, ender, t)
	a.account(gs, r, &req)
	a.free.release(r)
	r.members = nil
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
	wait  map[critpath.TermID]int64
	crit  map[critpath.TermID]int64
	model critpath.Model
	gs    []critpath.G     // the finishing request's timelines
	cp    critpath.Scratch // Walk and Simulate memory
}

func (s *scratch) init() {
	s.wait = map[critpath.TermID]int64{}
	s.crit = map[critpath.TermID]int64{}
}

// account books one finished request.
func (a *Analyzer) account(gs *groupState, r *reqState, req *critpath.Request) {
	lat := req.Latency()
	gs.count++
	gs.lat = append(gs.lat, lat)
	gs.begins = append(gs.begins, req.Begin)
	sum, committed := a.waitSums(gs, r, req)
	if committed > 1 {
		gs.forked++
	} else if sum > lat+lat/50 {
		gs.overfull++
	}
	path := a.scratch.cp.Walk(req)
	if a.critical(gs, path) != lat {
		gs.pathMismatch++
	}
	for i, p := range a.opts.Predictions {
		gs.pred[i] = append(gs.pred[i], a.scratch.cp.Simulate(req, a.model(p)))
	}
	if a.opts.FixPotential {
		simple := committed == 1 && !hasJoin(req)
		for tid, crit := range a.scratch.crit {
			// One goroutine and no joins: every wait lasts its recorded
			// length, so removing a term saves exactly its critical time.
			gain := crit
			if !simple {
				gain = lat - a.scratch.cp.Simulate(req, critpath.Model{Scale: removeOnly(tid)})
			}
			gs.term(tid).fix += gain
		}
	}
	gs.samples += r.samples
	for id, n := range r.regionCPU {
		gs.region(id).cpu += n
	}
	for st, n := range r.stackCPU {
		gs.cpuStacks[st] += n
	}
	gs.keepPath(r, req, path, a.opts.PathSamples)
	if a.opts.Each != nil {
		p := &Path{Task: r.task, Begin: req.Begin, End: req.End, Latency: lat, Goroutines: committed, Segs: path}
		a.opts.Each(gs.name, p)
	}
}

// waitSums adds the goroutine time of r's committed goroutines to gs and
// returns its total and the number of committed goroutines.
func (a *Analyzer) waitSums(gs *groupState, r *reqState, req *critpath.Request) (sum int64, committed int) {
	clear(a.scratch.wait)
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
			gs.region(r.members[i].regions[j]).wall += d
			switch s.Kind {
			case frame.Running:
				gs.running += d
			case frame.Runnable:
				gs.runnable += d
			default:
				a.scratch.wait[s.Term] += d
				gs.stack(s.Stack, s.Kind).wait += d
			}
		}
	}
	for tid, d := range a.scratch.wait {
		ts := gs.term(tid)
		ts.wait += d
		ts.requests++
	}
	return sum, committed
}

// critical adds a request's critical path to gs and returns its length.
func (a *Analyzer) critical(gs *groupState, path []critpath.PathSeg) (sum int64) {
	clear(a.scratch.crit)
	for _, p := range path {
		d := p.Dur()
		sum += d
		switch {
		case p.Unknown:
			gs.critUnknown += d
		case p.Term == critpath.NoTerm && p.Kind == frame.Running:
			gs.critRunning += d
		case p.Term == critpath.NoTerm:
			gs.critRunnable += d
		default:
			a.scratch.crit[p.Term] += d
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
	for tid, d := range a.scratch.crit {
		ts := gs.term(tid)
		ts.crit += d
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

func removeOnly(tid critpath.TermID) func(critpath.TermID) float64 {
	return func(t critpath.TermID) float64 {
		if t == tid {
			return 0
		}
		return 1
	}
}

// model turns a prediction into a simulation model over the current terms.
func (a *Analyzer) model(p Prediction) critpath.Model {
	ma := a.matcher(p.A)
	switch p.Op {
	case OpRemove:
		return critpath.Model{Scale: func(t critpath.TermID) float64 { return b2f(!ma(t)) }}
	case OpScale:
		f := p.Factor
		return critpath.Model{Scale: func(t critpath.TermID) float64 {
			if ma(t) {
				return f
			}
			return 1
		}}
	default:
		return critpath.Model{Overlap: []critpath.Pair{{A: ma, B: a.matcher(p.B)}}}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// matcher returns a predicate over TermIDs for a term name.
func (a *Analyzer) matcher(name string) func(critpath.TermID) bool {
	return func(t critpath.TermID) bool {
		if t < 0 || int(t) >= len(a.terms.list) {
			return false
		}
		return a.terms.list[t].Matches(name)
	}
}
