package critpath

import (
	"math/rand"
	"testing"
	"testing/quick"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// serial builds a one-goroutine request from (kind, term, ms) steps.
func serial(steps ...Seg) *Request {
	r := &Request{Gs: []G{{ID: 1, Creator: -1, Committed: true}}}
	t := tracein.Time(0)
	for _, s := range steps {
		s.Start, s.End = t, t+s.End
		if s.Waker == 0 {
			s.Waker = -1
		}
		s.Borrow = -1
		t = s.End
		r.Gs[0].Segs = append(r.Gs[0].Segs, s)
	}
	r.End = t
	return r
}

const ms = tracein.Time(1e6)

func run(d tracein.Time) Seg { return Seg{Kind: frame.Running, Term: NoTerm, End: d, Waker: -1} }
func wait(term TermID, d tracein.Time) Seg {
	return Seg{Kind: frame.Network, Term: term, End: d, Waker: -1}
}

func TestSerialPredictions(t *testing.T) {
	// cpu 1, A 100, cpu 1, B 50, cpu 2  → 154
	r := serial(run(1*ms), wait(0, 100*ms), run(1*ms), wait(1, 50*ms), run(2*ms))
	is := func(id TermID) func(TermID) bool { return func(t TermID) bool { return t == id } }
	cases := []struct {
		name string
		m    Model
		want tracein.Time
	}{
		{"identity", Model{}, 154 * ms},
		{"remove A", Model{Scale: func(t TermID) float64 { return map[bool]float64{true: 0, false: 1}[t == 0] }}, 54 * ms},
		{"scale B×0.5", Model{Scale: func(t TermID) float64 { return map[bool]float64{true: 0.5, false: 1}[t == 1] }}, 129 * ms},
		// latency − A − B + max(A, B)
		{"overlap A,B", Model{Overlap: []Pair{{A: is(0), B: is(1)}}}, 104 * ms},
		{"overlap B,A", Model{Overlap: []Pair{{A: is(1), B: is(0)}}}, 104 * ms},
		{"overlap absent", Model{Overlap: []Pair{{A: is(0), B: is(7)}}}, 154 * ms},
	}
	for _, c := range cases {
		if got := tracein.Time(Simulate(r, c.m)); got != c.want {
			t.Errorf("%s: Simulate = %v ms, want %v ms", c.name, float64(got)/1e6, float64(c.want)/1e6)
		}
	}
	path := Walk(r)
	if sum(path) != r.Latency() || len(path) != 5 {
		t.Errorf("path of %d pieces sums to %d, want 5 pieces summing to %d", len(path), sum(path), r.Latency())
	}
}

// forked: root runs 1 ms, forks two children (A 100 ms, B 50 ms), joins
// (waits on the later child), runs 2 ms.
func forked() *Request {
	r := &Request{End: 103 * ms}
	r.Gs = []G{
		{ID: 1, Creator: -1, Committed: true, Segs: []Seg{
			{Start: 0, End: 1 * ms, Kind: frame.Running, Term: NoTerm, Waker: -1, Borrow: -1},
			{Start: 1 * ms, End: 101 * ms, Kind: frame.Sync, Term: 9, Waker: 1, Borrow: -1},
			{Start: 101 * ms, End: 103 * ms, Kind: frame.Running, Term: NoTerm, Waker: -1, Borrow: -1},
		}},
		{ID: 2, Creator: 0, Committed: true, Start: 1 * ms, Segs: []Seg{
			{Start: 1 * ms, End: 101 * ms, Kind: frame.Network, Term: 0, Waker: -1, Borrow: -1},
		}},
		{ID: 3, Creator: 0, Committed: true, Start: 1 * ms, Segs: []Seg{
			{Start: 1 * ms, End: 51 * ms, Kind: frame.Network, Term: 1, Waker: -1, Borrow: -1},
		}},
	}
	return r
}

func TestForkedCriticalPath(t *testing.T) {
	r := forked()
	path := Walk(r)
	if sum(path) != r.Latency() {
		t.Fatalf("path sums to %d, want %d", sum(path), r.Latency())
	}
	var onA, onJoin tracein.Time
	for _, p := range path {
		switch p.Term {
		case 0:
			onA += p.End - p.Start
		case 9:
			onJoin += p.End - p.Start
		}
	}
	if onA != 100*ms || onJoin != 0 {
		t.Errorf("critical: A %v ms, join %v ms; want A 100, join 0", onA/ms, onJoin/ms)
	}
}

// TestJoinAllPrediction: a WaitGroup join records only the last child's
// wake-up; removing that child's wait makes the other child the join's end.
func TestJoinAllPrediction(t *testing.T) {
	removeA := Model{Scale: func(t TermID) float64 { return map[bool]float64{true: 0, false: 1}[t == 0] }}
	for _, tt := range []struct {
		name    string
		joinAll bool
		want    tracein.Time
	}{
		{"WaitGroup: B becomes critical", true, 53 * ms}, // 1 + 50 (B) + 2
		{"a plain hand-off from A", false, 3 * ms},       // only A was awaited
	} {
		r := forked()
		r.Gs[0].Segs[1].JoinAll = tt.joinAll
		if got := tracein.Time(Simulate(r, removeA)); got != tt.want {
			t.Errorf("%s: Simulate = %v ms, want %v ms", tt.name, float64(got)/1e6, float64(tt.want)/1e6)
		}
		if got := Simulate(r, Model{}); got != r.Latency() {
			t.Errorf("%s: identity = %d, want %d", tt.name, got, r.Latency())
		}
	}
}

func TestRandomRequestsSumToLatency(t *testing.T) {
	f := func(seed int64) bool {
		r := randomRequest(rand.New(rand.NewSource(seed)))
		return sum(Walk(r)) == r.Latency() && Simulate(r, Model{}) == r.Latency()
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500}); err != nil {
		t.Error(err)
	}
}

// randomRequest builds a consistent request: a root that alternates running
// and waits, where some waits are joins on children it created earlier and
// some are explained by borrowed timelines.
func randomRequest(rng *rand.Rand) *Request {
	r := &Request{Gs: []G{{ID: 1, Creator: -1, Committed: true}}}
	t := tracein.Time(0)
	step := func() tracein.Time { return tracein.Time(1 + rng.Intn(1000)) }
	for i := 0; i < 2+rng.Intn(10); i++ {
		d := step()
		root := &r.Gs[0]
		root.Segs = append(root.Segs, Seg{Start: t, End: t + d, Kind: frame.Running, Term: NoTerm, Waker: -1, Borrow: -1})
		t += d
		switch rng.Intn(3) {
		case 0: // external wait
			d = step()
			root.Segs = append(root.Segs, Seg{Start: t, End: t + d, Kind: frame.Network, Term: TermID(rng.Intn(4)), Waker: -1, Borrow: -1})
			t += d
		case 1: // fork a child at t-1 that runs, waits, runs; join on it
			c := G{ID: tracein.GoID(len(r.Gs) + 1), Creator: 0, Committed: rng.Intn(4) > 0, Start: t - 1}
			ct := t - 1
			for _, k := range []frame.Kind{frame.Runnable, frame.Network, frame.Running} {
				d := step()
				c.Segs = append(c.Segs, Seg{Start: ct, End: ct + d, Kind: k, Term: map[bool]TermID{true: 5, false: NoTerm}[k == frame.Network], Waker: -1, Borrow: -1})
				ct += d
			}
			end := max(ct, t+1)
			c.Segs[len(c.Segs)-1].End = end
			r.Gs = append(r.Gs, c)
			root = &r.Gs[0]
			root.Segs = append(root.Segs, Seg{Start: t, End: end, Kind: frame.Sync, Term: 6, Waker: int32(len(r.Gs) - 1), Borrow: -1, JoinAll: rng.Intn(2) == 0})
			t = end
		case 2: // a wait explained by a borrowed timeline that covers part of it
			d = step()
			b := Borrowed{ID: 99, Segs: []Seg{{Start: t + d/2, End: t + d, Kind: frame.Network, Term: NoTerm, Waker: -1, Borrow: -1}}}
			r.Borrows = append(r.Borrows, b)
			root.Segs = append(root.Segs, Seg{Start: t, End: t + d, Kind: frame.Select, Term: 7, Waker: -1, Borrow: int32(len(r.Borrows) - 1)})
			t += d
		}
	}
	r.End = t
	return r
}

func sum(path []PathSeg) int64 {
	var s int64
	for _, p := range path {
		s += p.Dur()
	}
	return s
}

// TestCPUTerms: running time given a frame's CPU term is scaled and removed
// as a wait is, and the walk carries the term on the path, while Term
// stays NoTerm for running time (what a caller that sums waits relies on).
func TestCPUTerms(t *testing.T) {
	// cpu 1 (frame 3), A 100, cpu 2 (frame 4) → 103
	cpu := func(term TermID, d tracein.Time) Seg {
		s := run(d)
		s.CPU, s.From = term, CPUSamples
		return s
	}
	r := serial(cpu(3, 1*ms), wait(0, 100*ms), cpu(4, 2*ms))
	only := func(id TermID, f float64) Model {
		return Model{Scale: func(t TermID) float64 {
			if t == id {
				return f
			}
			return 1
		}}
	}
	for _, c := range []struct {
		name string
		m    Model
		want tracein.Time
	}{
		{"identity", Model{}, 103 * ms},
		{"remove frame 4's CPU", only(4, 0), 101 * ms},
		{"scale frame 3's CPU ×3", only(3, 3), 105 * ms},
		{"a plain running segment is kept", only(NoTerm, 0), 103 * ms},
	} {
		if got := tracein.Time(Simulate(r, c.m)); got != c.want {
			t.Errorf("%s: %v ms, want %v ms", c.name, float64(got)/1e6, float64(c.want)/1e6)
		}
	}
	var onCPU int64
	for _, p := range Walk(r) {
		if p.From != CPUNone {
			if p.Term != NoTerm || p.Subject() != p.CPU {
				t.Errorf("piece %+v: Term %d, Subject %d", p, p.Term, p.Subject())
			}
			onCPU += p.Dur()
		}
	}
	if onCPU != int64(3*ms) {
		t.Errorf("%d ns of frames' CPU on the path, want 3 ms", onCPU)
	}
}
