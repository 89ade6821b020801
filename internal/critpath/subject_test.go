package critpath

import (
	"testing"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
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

// TestSimulateAlongRunnable: a scheduler wait between two running pieces
// of a frame's CPU (a preemption in the frame) that goes along with it
// scales and goes with the frame, and keeps its kind on the critical path;
// the scheduler wait after a block does not. A request of 1 ms sleep, 0.5
// ms runnable after it (a wakeup's), then 1 ms CPU, 1 ms runnable along
// with it, 1 ms CPU.
func TestSimulateAlongRunnable(t *testing.T) {
	t.Parallel()
	const cpu, wait TermID = 3, 7
	const ms = 1_000_000
	run := func(a, b int64) Seg {
		return Seg{Start: tracein.Time(a), End: tracein.Time(b), Kind: frame.Running, Term: NoTerm, CPU: cpu, From: CPUSamples, Waker: -1, Borrow: -1}
	}
	preempted := Seg{Start: 2500 * 1000, End: 3500 * 1000, Kind: frame.Runnable, Term: NoTerm, CPU: NoTerm, Waker: -1, Borrow: -1}
	preempted.SetAlong(cpu)
	r := &Request{Begin: 0, End: 4500 * 1000, Gs: []G{{Creator: -1, Committed: true, Segs: []Seg{
		{Start: 0, End: ms, Kind: frame.Sleep, Term: wait, CPU: NoTerm, Waker: -1, Borrow: -1},
		{Start: ms, End: 1500 * 1000, Kind: frame.Runnable, Term: NoTerm, CPU: NoTerm, Waker: -1, Borrow: -1},
		run(1500*1000, 2500*1000),
		preempted,
		run(3500*1000, 4500*1000),
	}}}}
	scale := func(f float64) Model {
		return Model{Scale: func(x TermID) float64 {
			if x == cpu {
				return f
			}
			return 1
		}}
	}
	for _, tc := range []struct {
		name string
		f    float64
		want int64
	}{
		{"as recorded", 1, 4500 * 1000},
		{"the CPU by half: 1.5 ms saved, the preemption's half with it", 0.5, 3 * ms},
		{"the CPU removed: 3 ms saved, the wakeup's runnable stays", 0, 1500 * 1000},
	} {
		if got := Simulate(r, scale(tc.f)); got != tc.want {
			t.Errorf("%s: %d ns, want %d", tc.name, got, tc.want)
		}
	}
	var sc Scratch
	var along, runnable int64
	for _, p := range sc.Walk(r) {
		if p.Kind == frame.Runnable {
			runnable += p.Dur()
			if p.Along() == cpu {
				along += p.Dur()
			}
		}
	}
	if runnable != 1500*1000 || along != ms {
		t.Errorf("critical runnable %d ns, %d of it along with the CPU; want 1.5 ms and 1 ms", runnable, along)
	}
}
