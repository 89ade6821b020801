package critpath

import (
	"math/rand"
	"testing"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// wide builds a random request of the shapes the analysers make beyond
// tangled's: up to 40 goroutines whose creator is any other goroutine (the
// JVM's creatorOf may name a later member, so creators can form cycles),
// fan-outs joined by JoinAll waits, timelines of up to 150 segments, up to
// 60 terms, and times far from zero (a trace's nanoseconds).
func wide(rng *rand.Rand) *Request {
	n := 1 + rng.Intn(40)
	terms := 1 + rng.Intn(60)
	base := tracein.Time(1e15) + tracein.Time(rng.Int63n(1e9))
	r := &Request{Begin: base, EndG: int32(rng.Intn(n))}
	chaos := rng.Intn(3) == 0 // wakers and creators from anywhere
	for g := 0; g < n; g++ {
		G := G{ID: tracein.GoID(g + 1), Creator: -1, Committed: rng.Intn(8) > 0, Start: base + tracein.Time(rng.Intn(2000))}
		if g > 0 && rng.Intn(6) > 0 {
			G.Creator = int32(rng.Intn(g)) // as the Go analyser: an earlier member
			if k := segAt(r.Gs[G.Creator].Segs, G.Start); !chaos && (k < 0 || r.Gs[G.Creator].Segs[k].Kind != frame.Running) {
				G.Creator = -1 // (a goroutine is created by a running one)
			}
			if chaos && rng.Intn(8) == 0 {
				G.Creator = int32(rng.Intn(n)) // as the JVM's may
			}
		}
		t := G.Start + tracein.Time(rng.Intn(3))
		for i, m := 0, rng.Intn(150); i < m; i++ {
			d := tracein.Time(1 + rng.Intn(100))
			s := Seg{Start: t, End: t + d, Kind: frame.Running, Term: NoTerm, CPU: NoTerm, Waker: -1, Borrow: -1}
			switch rng.Intn(5) {
			case 0:
				if rng.Intn(2) == 0 {
					s.SetAlong(TermID(rng.Intn(terms)))
				}
			case 1:
				s.CPU, s.From = TermID(rng.Intn(terms)), CPUStacks
			case 2, 3:
				s.Kind, s.Term = frame.Sync, TermID(rng.Intn(terms))
				if chaos && rng.Intn(8) == 0 { // any goroutine: cycles through ties
					s.Waker = int32(rng.Intn(n))
					s.JoinAll = rng.Intn(2) == 0
				}
			case 4:
				s.Kind = frame.Runnable
			}
			G.Segs = append(G.Segs, s)
			t = s.End + tracein.Time(rng.Intn(2)*rng.Intn(50))
		}
		r.Gs = append(r.Gs, G)
	}
	// Most waits woken by a goroutine that was running when they ended, as
	// a wake-up is: the simulation then meets no cycle.
	for g := range r.Gs {
		for i := range r.Gs[g].Segs {
			s := &r.Gs[g].Segs[i]
			if s.Kind != frame.Sync || s.Waker >= 0 || rng.Intn(3) == 0 {
				continue
			}
			for try := 0; try < 4; try++ {
				h := rng.Intn(n)
				if k := segAt(r.Gs[h].Segs, s.End); h != g && k >= 0 && r.Gs[h].Segs[k].Kind == frame.Running {
					s.Waker, s.JoinAll = int32(h), rng.Intn(3) == 0
					break
				}
			}
		}
	}
	r.End = base + tracein.Time(rng.Intn(8000))
	if segs := r.Gs[r.EndG].Segs; len(segs) > 0 && rng.Intn(3) > 0 {
		r.End = segs[len(segs)-1].End
	}
	return r
}

// TestRemovalsExactWide: TestRemovalsExact on wide requests, with every
// term, a random subset of the terms (listed twice, with NoTerm and absent
// terms), or none listed.
func TestRemovalsExactWide(t *testing.T) {
	var x Removals
	var sc Scratch
	var exact, cyclic int
	for seed := int64(0); seed < 1500; seed++ {
		rng := rand.New(rand.NewSource(seed))
		r := wide(rng)
		var some []TermID
		switch seed % 3 {
		case 1:
			some = []TermID{NoTerm}
			for term := TermID(0); term < 64; term++ {
				if rng.Intn(3) == 0 {
					some = append(some, term, term)
				}
			}
		case 2:
			some = []TermID{}
		}
		x.Begin(r, some)
		if x.exact {
			exact++
		} else {
			cyclic++
		}
		for term := NoTerm; term < 64; term++ {
			if rng.Intn(4) > 0 && term > 2 {
				continue // (a quarter of the terms: Simulate is the test's cost)
			}
			remove := Model{Scale: func(t TermID) float64 { return b2f(t != term) }}
			want := sc.Simulate(r, remove)
			if got := x.Latency(r, term); got != want {
				t.Fatalf("seed %d, term %d: Removals %d, Simulate %d (exact %v)", seed, term, got, want, x.exact)
			}
		}
	}
	t.Logf("%d requests without a cycle, %d with", exact, cyclic)
	if exact == 0 || cyclic == 0 {
		t.Errorf("want both kinds of request")
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
