package budget

import (
	"testing"
	"time"
)

// TestCrossCheck: the process's own counter decides whether the process or
// only the host was short of CPU, and whether trace running time exceeds
// the CPU the process used.
func TestCrossCheck(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cpu     time.Duration // over a 1 s trace on 2 Ps
		busy    float64       // share of P time running
		running time.Duration // trace running time in requests
		want    []FindingKind
	}{
		{"process saturated", 1900 * time.Millisecond, 0.97, 0, []FindingKind{FindCPUSaturated}},
		{"host busy, process at half", time.Second, 0.97, 0, []FindingKind{FindHostBusy}},
		{"neither", 500 * time.Millisecond, 0.5, 0, nil},
		{"running at 1.2× CPU is within the margin", 500 * time.Millisecond, 0.5, 600 * time.Millisecond, nil},
		{"running at 1.77× CPU: off-CPU while running", 500 * time.Millisecond, 0.5, 885 * time.Millisecond, []FindingKind{FindCPUMismatch}},
		{"no counter: nothing to cross-check", 0, 0.5, 885 * time.Millisecond, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := &Result{
				Info:   TraceInfo{Start: 0, End: 1e9, Procs: 2, ProcBusy: int64(tt.busy * 2e9)},
				Groups: []*Group{{Running: TimeStat{Wait: int64(tt.running)}}},
			}
			got := CrossCheck(res, Counter{CPU: tt.cpu})
			var kinds []FindingKind
			for _, f := range got {
				kinds = append(kinds, f.Kind)
			}
			if len(kinds) != len(tt.want) {
				t.Fatalf("CrossCheck kinds = %v, want %v", kinds, tt.want)
			}
			for i := range kinds {
				if kinds[i] != tt.want[i] {
					t.Errorf("CrossCheck kinds = %v, want %v", kinds, tt.want)
				}
			}
		})
	}
}
