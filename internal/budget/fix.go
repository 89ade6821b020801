package budget

import "github.com/latscope/latscope/internal/critpath"

// Fix computes a request's fix column — what removing each term on its
// critical path would save — for the Go analysis and the JVM's alike,
// exactly: one goroutine and no joins, every wait lasts its recorded
// length, so removing a term saves its critical time (and, for a frame's
// CPU, the running time that went along with it); a term only in the tail
// of the goroutine that ended the request saves its length there
// (critpath.Tail); the others' removals are simulated all at once, one
// time per term at each point (critpath.Removals). Begin a request, then
// ask Gain for each of its critical terms. The zero value is ready.
type Fix struct {
	req    *critpath.Request
	lat    int64
	simple bool // one goroutine, no joins
	tailed bool // Tail found for req
	begun  bool // Removals begun for req
	tail   critpath.Tail
	rm     critpath.Removals
	terms  []critpath.TermID // the terms Gain will be asked, from Begin
	ask    []critpath.TermID // of which those Removals answers

	// For tests: noTail asks Removals every term Tail would answer; whole
	// simulates each term whole instead (after Tail, unless noTail) on cp;
	// count counts the whole simulations and their segments in fixSims and
	// fixSegs (Removals counts its own).
	noTail, whole, count bool
	fixSims, fixSegs     int64
	cp                   *critpath.Scratch
	remove               critpath.TermID
	removeM              critpath.Model
}

// Begin prepares the fix column of req, whose committed goroutines are
// committed; terms are the terms Gain will be asked (nil: any).
func (f *Fix) Begin(req *critpath.Request, committed int, terms []critpath.TermID) {
	f.req, f.lat, f.terms = req, req.Latency(), terms
	f.simple = committed == 1 && !hasJoin(req)
	f.tailed = !f.simple && !f.noTail
	if f.tailed {
		f.tail.Find(req)
	}
	f.begun = false
}

// Gain returns what removing term t would save in the request Begin
// prepared; crit is t's critical time in it, with the running time that
// went along with a frame's CPU (critpath.Seg.Along).
func (f *Fix) Gain(t critpath.TermID, crit int64) int64 {
	if f.simple {
		return crit
	}
	if f.tailed {
		if g, ok := f.tail.Gain(t); ok {
			return g
		}
	}
	if f.whole {
		if f.removeM.Scale == nil {
			f.removeM = critpath.Model{Scale: func(x critpath.TermID) float64 { return b2f(x != f.remove) }}
		}
		f.remove = t
		g := f.lat - f.cp.Simulate(f.req, f.removeM)
		if f.count {
			f.fixSims++
			f.fixSegs += f.cp.Simulated()
		}
		return g
	}
	if !f.begun {
		var ask []critpath.TermID // nil: every term of the request
		if f.terms != nil {
			ask = append(f.ask[:0], critpath.NoTerm) // (never nil; Begin skips NoTerm)
			for _, u := range f.terms {
				if f.tailed {
					if _, ok := f.tail.Gain(u); ok {
						continue
					}
				}
				ask = append(ask, u)
			}
			f.ask = ask
		}
		f.rm.Begin(f.req, ask)
		f.begun = true
	}
	return f.lat - f.rm.Latency(f.req, t)
}
