package pprofexport

import (
	"math"
	"testing"

	"github.com/latscope/latscope/internal/tracein"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		total   int64
		samples map[tracein.StackID]int
	}{
		{"none", 1000, nil},
		{"zero total", 0, map[tracein.StackID]int{1: 3}},
		{"one", 1000, map[tracein.StackID]int{7: 2}},
		{"thirds", 1000, map[tracein.StackID]int{1: 1, 2: 1, 3: 1}},
		{"uneven", 999_999_937, map[tracein.StackID]int{1: 3, 2: 5, 3: 11, 4: 0}},
		{"huge", math.MaxInt64 / 3, map[tracein.StackID]int{1: 1_000_003, 2: 999_983}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := split(tc.total, tc.samples)
			n := 0
			for _, c := range tc.samples {
				n += c
			}
			if tc.total <= 0 || n == 0 {
				if parts != nil {
					t.Fatalf("split = %v, want nil", parts)
				}
				return
			}
			var got int64
			for i, p := range parts {
				got += p.v
				exact := float64(tc.total) * float64(tc.samples[p.stack]) / float64(n)
				if math.Abs(float64(p.v)-exact) > 1+exact*1e-12 {
					t.Errorf("part %d (stack %d) = %d, want ≈ %.1f", i, p.stack, p.v, exact)
				}
				if i > 0 && parts[i-1].stack >= p.stack {
					t.Errorf("parts not in stack order: %v", parts)
				}
			}
			if got != tc.total {
				t.Errorf("Σ parts = %d, want %d", got, tc.total)
			}
		})
	}
}
