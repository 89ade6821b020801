package critpath

import "testing"

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
