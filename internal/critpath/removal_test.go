package critpath

import (
	"math/rand"
	"testing"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// TestRemovalsExact: Removals.Latency is, for every term (and one absent
// from the request), what Simulate gives with that term removed, on random
// requests whose goroutines create and wake each other, join, leave gaps
// and tie, so that some simulations meet cycles.
func TestRemovalsExact(t *testing.T) {
	var x Removals
	x.Count = true
	var sc Scratch
	var exact, cyclic, pruned, whole int64
	for seed := int64(0); seed < 20000; seed++ {
		rng := rand.New(rand.NewSource(seed))
		r := tangled(rng)
		// every term of the request, or some terms (absent ones too), the
		// others simulated whole
		var some []TermID
		if seed%2 == 1 {
			some = []TermID{}
			for term := TermID(0); term <= 7; term++ {
				if rng.Intn(2) == 0 {
					some = append(some, term)
				}
			}
		}
		x.Begin(r, some)
		if x.exact {
			exact++
		} else {
			cyclic++
		}
		for term := TermID(0); term <= 7; term++ {
			remove := Model{Scale: func(t TermID) float64 {
				if t == term {
					return 0
				}
				return 1
			}}
			want := sc.Simulate(r, remove)
			whole += sc.Simulated()
			if got := x.Latency(r, term); got != want {
				t.Fatalf("seed %d, term %d: Removals %d, Simulate %d (exact %v)\n%+v", seed, term, got, want, x.exact, r)
			}
		}
	}
	sims, visits, _, _ := x.Counts()
	pruned = visits
	t.Logf("%d requests without a cycle, %d with; %d simulations; segments simulated %d, by whole simulations %d", exact, cyclic, sims, pruned, whole)
	if maxCells > 0 && (exact == 0 || cyclic == 0) {
		t.Errorf("want both kinds of request")
	}
}

// TestRemovalsExactWhole: TestRemovalsExact with every request over the
// vector simulation's memory bound, so that each term is simulated whole.
func TestRemovalsExactWhole(t *testing.T) {
	defer func(n int) { maxCells = n }(maxCells)
	maxCells = 0
	TestRemovalsExact(t)
}

// tangled builds a random request: up to 6 goroutines, each created by an
// earlier one, with segments that may leave gaps, waits woken by any
// goroutine (joins among them), CPU terms and running time along with them.
func tangled(rng *rand.Rand) *Request {
	n := 1 + rng.Intn(6)
	r := &Request{Begin: 0, EndG: int32(rng.Intn(n))}
	for g := 0; g < n; g++ {
		G := G{ID: tracein.GoID(g + 1), Creator: -1, Committed: rng.Intn(5) > 0, Start: tracein.Time(rng.Intn(200))}
		if g > 0 && rng.Intn(4) > 0 {
			G.Creator = int32(rng.Intn(g))
		}
		t := G.Start + tracein.Time(rng.Intn(3))
		for i, m := 0, rng.Intn(12); i < m; i++ {
			d := tracein.Time(rng.Intn(60))
			s := Seg{Start: t, End: t + d, Kind: frame.Running, Term: NoTerm, CPU: NoTerm, Waker: -1, Borrow: -1}
			switch rng.Intn(4) {
			case 0: // plain running, maybe along with a CPU term
				if rng.Intn(2) == 0 {
					s.SetAlong(TermID(rng.Intn(6)))
				}
			case 1: // a frame's CPU
				s.CPU, s.From = TermID(rng.Intn(6)), CPUSamples
			case 2: // a wait, maybe woken by a request goroutine
				s.Kind, s.Term = frame.Sync, TermID(rng.Intn(6))
				if rng.Intn(3) > 0 {
					s.Waker = int32(rng.Intn(n))
					s.JoinAll = rng.Intn(3) == 0
				}
			case 3:
				s.Kind = frame.Runnable
			}
			G.Segs = append(G.Segs, s)
			t = s.End + tracein.Time(rng.Intn(2)*rng.Intn(20)) // sometimes a gap
		}
		r.Gs = append(r.Gs, G)
	}
	r.End = tracein.Time(rng.Intn(400))
	if segs := r.Gs[r.EndG].Segs; len(segs) > 0 && rng.Intn(3) > 0 {
		r.End = segs[len(segs)-1].End
	}
	return r
}

// TestRemovalsEmpty: a request without goroutines keeps its latency.
func TestRemovalsEmpty(t *testing.T) {
	var x Removals
	r := &Request{Begin: 5, End: 9}
	x.Begin(r, nil)
	if got := x.Latency(r, 0); got != 4 {
		t.Errorf("Latency = %d, want 4", got)
	}
}
