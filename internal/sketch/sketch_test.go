package sketch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/latscope/latscope/internal/quantile"
)

// TestQuantileWithinRelErr: on every distribution the estimates are within
// RelErr of the nearest-rank values, min and max exact.
func TestQuantileWithinRelErr(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dists := []struct {
		name string
		gen  func() int64
	}{
		{"uniform ms", func() int64 { return 1e6 + r.Int64N(9e6) }},
		{"lognormal", func() int64 { return int64(math.Exp(14 + 2*r.NormFloat64())) }},
		{"bimodal", func() int64 {
			if r.IntN(10) == 0 {
				return 50e6 + r.Int64N(1e6)
			}
			return 2e6 + r.Int64N(1e5)
		}},
		{"with zeros", func() int64 { return max(0, r.Int64N(2000)-1000) }},
		{"one value", func() int64 { return 7e6 }},
	}
	for _, d := range dists {
		t.Run(d.name, func(t *testing.T) {
			for _, n := range []int{1, 2, 10, 1000, 20000} {
				var s Sketch
				xs := make([]int64, n)
				for i := range xs {
					xs[i] = d.gen()
					s.Add(xs[i])
				}
				slices.Sort(xs)
				for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 0.999, 1} {
					want, got := quantile.Sorted(xs, q), s.Quantile(q)
					if math.Abs(float64(got-want)) > RelErr*float64(want)+0.5 {
						t.Errorf("n=%d q=%v: %d, want %d within %v", n, q, got, want, RelErr)
					}
				}
				if s.Min() != xs[0] || s.Max() != xs[n-1] || s.Count() != uint64(n) {
					t.Errorf("n=%d: min %d max %d count %d, want %d %d %d", n, s.Min(), s.Max(), s.Count(), xs[0], xs[n-1], n)
				}
			}
		})
	}
}

// TestMerge: merging sketches of parts equals the sketch of the whole.
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var whole Sketch
	parts := make([]Sketch, 5)
	for i := range 5000 {
		v := int64(math.Exp(10 + 3*r.Float64() + float64(i%5)))
		whole.Add(v)
		parts[i%5].Add(v)
	}
	var merged Sketch
	for i := range parts {
		merged.Merge(&parts[i])
	}
	merged.Merge(&Sketch{})
	for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 1} {
		if a, b := merged.Quantile(q), whole.Quantile(q); a != b {
			t.Errorf("q=%v: merged %d, whole %d", q, a, b)
		}
	}
	if merged.Count() != whole.Count() || merged.Min() != whole.Min() || merged.Max() != whole.Max() {
		t.Error("merged count/min/max differ from the whole's")
	}
}

// TestBoundedMemory: a million values from 1 µs to 100 s take a few
// thousand buckets at most.
func TestBoundedMemory(t *testing.T) {
	var s Sketch
	r := rand.New(rand.NewPCG(7, 8))
	for range 1_000_000 {
		s.Add(int64(math.Exp(math.Log(1e3) + r.Float64()*math.Log(1e8))))
	}
	if b, limit := s.Buckets(), int(math.Log(1e8)/logGamma)+2; b > limit {
		t.Errorf("%d buckets, want at most %d", b, limit)
	}
	if s.Quantile(0.5) == 0 || (&Sketch{}).Quantile(0.5) != 0 {
		t.Error("want a median, and 0 for an empty sketch")
	}
}
