package critpath

import (
	"math/rand"
	"testing"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// fanIn builds a request whose vector simulation reads more points than
// it has segments: g0 runs a CPU term, starts k children, then waits k
// times (each a JoinAll wait woken by h, which runs a CPU term throughout)
// for one of them; each child is one wait, woken by h, that ends inside
// its wait of g0. Every segment and every point read then takes a vector.
func fanIn(k int) *Request {
	cpu := func(s, e tracein.Time, term TermID) Seg {
		return Seg{Start: s, End: e, Kind: frame.Running, Term: NoTerm, CPU: term, From: CPUSamples, Waker: -1, Borrow: -1}
	}
	end := 100 + 10*tracein.Time(k)
	r := &Request{Begin: 0, End: end, EndG: 0}
	g0 := G{ID: 1, Creator: -1, Committed: true, Segs: []Seg{cpu(0, 100, 0)}}
	for j := range k {
		s := 100 + 10*tracein.Time(j)
		g0.Segs = append(g0.Segs, Seg{Start: s, End: s + 10, Kind: frame.Sync, Term: 1, CPU: NoTerm, Waker: 1, Borrow: -1, JoinAll: true})
	}
	h := G{ID: 2, Creator: -1, Committed: true, Segs: []Seg{cpu(0, 2*end, 2)}}
	r.Gs = append(r.Gs, g0, h)
	for i := range k {
		start := tracein.Time(1 + i%99)
		r.Gs = append(r.Gs, G{ID: tracein.GoID(3 + i), Creator: 0, Committed: true, Start: start,
			Segs: []Seg{{Start: start, End: 105 + 10*tracein.Time(i), Kind: frame.Sync, Term: TermID(3 + i%5), CPU: NoTerm, Waker: 1, Borrow: -1}}})
	}
	return r
}

// TestRemovalsMemoryBound: the vector simulation's arena never holds more
// than maxCells times, whatever the request; a request that would take
// more is simulated whole per term, with the same answers.
func TestRemovalsMemoryBound(t *testing.T) {
	defer func(n int) { maxCells = n }(maxCells)
	check := func(name string, r *Request, limit int) {
		t.Helper()
		maxCells = limit
		var x Removals
		x.Begin(r, nil)
		if len(x.arena) > maxCells {
			t.Errorf("%s: arena %d times, over maxCells %d", name, len(x.arena), maxCells)
		}
		var sc Scratch
		for term := NoTerm; term < 10; term++ {
			want := sc.Simulate(r, Model{Scale: func(u TermID) float64 { return b2f(u != term) }})
			if got := x.Latency(r, term); got != want {
				t.Fatalf("%s, term %d: Removals %d, Simulate %d (exact %v)", name, term, got, want, x.exact)
			}
		}
	}
	r := fanIn(1000)
	check("fanIn", r, 1<<22)
	cells := len(r.Gs)
	for _, g := range r.Gs {
		cells += len(g.Segs)
	}
	var x Removals
	x.Begin(r, nil)
	check("fanIn at its estimate", r, cells*x.w*2) // its arena takes more than the estimate
	rng := rand.New(rand.NewSource(1))
	for range 300 {
		check("wide", wide(rng), 1+rng.Intn(1<<15))
	}
}
