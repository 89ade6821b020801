package critpath

import (
	"testing"

	"github.com/latscope/latscope/internal/frame"
)

// TestSubject: a what-if acts on a wait's term, on the CPU term of the
// frame a running piece ran in when a frame was found (from samples or
// stacks), and on nothing for plain running time; Dur is End − Start.
func TestSubject(t *testing.T) {
	t.Parallel()
	const wait, cpu TermID = 3, 7
	for _, tc := range []struct {
		name string
		seg  Seg
		want TermID
	}{
		{"a wait", Seg{Term: wait, CPU: cpu, From: CPUSamples}, wait},
		{"running, frame from samples", Seg{Term: NoTerm, CPU: cpu, From: CPUSamples}, cpu},
		{"running, frame from stacks", Seg{Term: NoTerm, CPU: cpu, From: CPUStacks}, cpu},
		{"running, no frame", Seg{Term: NoTerm, CPU: cpu, From: CPUNone}, NoTerm},
	} {
		tc.seg.Start, tc.seg.End = 100, 350
		if got := tc.seg.Subject(); got != tc.want {
			t.Errorf("%s: Seg.Subject() = %d, want %d", tc.name, got, tc.want)
		}
		p := PathSeg{Start: tc.seg.Start, End: tc.seg.End, Term: tc.seg.Term, CPU: tc.seg.CPU, From: tc.seg.From}
		if got := p.Subject(); got != tc.want {
			t.Errorf("%s: PathSeg.Subject() = %d, want %d", tc.name, got, tc.want)
		}
		if tc.seg.Dur() != 250 || p.Dur() != 250 {
			t.Errorf("%s: Dur = %d and %d, want 250", tc.name, tc.seg.Dur(), p.Dur())
		}
	}
}

// TestSimulateAlong: plain running time that went along with a frame's CPU
// (Seg.Along) scales and goes with that frame in a what-if, and stays plain
// in Subject; a request of CPU 2 ms, 1 ms along with it, a scheduler wait of
// 0.5 ms and a 2 ms wait on one goroutine.
func TestSimulateAlong(t *testing.T) {
	t.Parallel()
	const cpu, wait TermID = 4, 9
	const ms = 1_000_000
	along := Seg{Start: 2 * ms, End: 3 * ms, Kind: frame.Running, Term: NoTerm, CPU: NoTerm, Waker: -1, Borrow: -1}
	along.SetAlong(cpu)
	r := &Request{Begin: 0, End: 5500 * 1000, Gs: []G{{Creator: -1, Committed: true, Segs: []Seg{
		{Start: 0, End: 2 * ms, Kind: frame.Running, Term: NoTerm, CPU: cpu, From: CPUSamples, Waker: -1, Borrow: -1},
		along,
		{Start: 3 * ms, End: 3500 * 1000, Kind: frame.Runnable, Term: NoTerm, CPU: NoTerm, Waker: -1, Borrow: -1},
		{Start: 3500 * 1000, End: 5500 * 1000, Kind: frame.Sleep, Term: wait, CPU: NoTerm, Waker: -1, Borrow: -1},
	}}}}
	if s := r.Gs[0].Segs[1]; s.Subject() != NoTerm || s.SimSubject() != cpu || s.Along() != cpu {
		t.Fatalf("along piece: Subject %d, SimSubject %d, Along %d; want %d, %d, %d", s.Subject(), s.SimSubject(), s.Along(), NoTerm, cpu, cpu)
	}
	if s := r.Gs[0].Segs[2]; s.Along() != NoTerm || s.SimSubject() != NoTerm {
		t.Fatalf("a segment without along: Along %d, SimSubject %d, want none", s.Along(), s.SimSubject())
	}
	scale := func(term TermID, f float64) Model {
		return Model{Scale: func(x TermID) float64 {
			if x == term {
				return f
			}
			return 1
		}}
	}
	for _, tc := range []struct {
		name string
		m    Model
		want int64
	}{
		{"none", Model{}, 5500 * 1000},
		{"scale the CPU by half: 1.5 ms saved", scale(cpu, 0.5), 4 * ms},
		{"remove the CPU: 3 ms saved", scale(cpu, 0), 2500 * 1000},
		{"remove the wait: 2 ms saved", scale(wait, 0), 3500 * 1000},
	} {
		if got := Simulate(r, tc.m); got != tc.want {
			t.Errorf("%s: %d ns, want %d", tc.name, got, tc.want)
		}
	}
	var sc Scratch
	path := sc.Walk(r)
	var alongCrit int64
	for _, p := range path {
		if p.Along() == cpu {
			alongCrit += p.Dur()
		}
		if p.Subject() == cpu && p.Along() == cpu {
			t.Errorf("path piece %+v: both the CPU and along with it", p)
		}
	}
	if alongCrit != ms {
		t.Errorf("critical path along with the CPU: %d ns, want 1 ms", alongCrit)
	}
}
