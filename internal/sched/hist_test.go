package sched

import (
	"math/rand/v2"
	"slices"
	"testing"
	"testing/quick"
	"time"
)

// TestHistBuckets: every value falls in a bucket whose bounds hold it, and
// buckets are at most 1/8 of their lower bound wide.
func TestHistBuckets(t *testing.T) {
	f := func(v uint64) bool {
		ns := int64(v >> 4) // below 2^60 ns (36 years), clear of the top buckets
		b := histBucket(ns)
		lo, hi := histLower(b), histLower(b+1)
		return lo <= ns && ns < hi && (ns < histSub || hi-lo <= lo/histSub)
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
	for ns := int64(0); ns < 100; ns++ {
		if !f(uint64(ns) << 4) {
			t.Errorf("value %d outside its bucket", ns)
		}
	}
}

// TestHistQuantiles compares estimates with exact quantiles of a skewed
// sample: within the bucket width (12.5 %).
func TestHistQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h waitHist
	var vals []int64
	for range 10000 {
		v := int64(r.ExpFloat64() * float64(50*time.Microsecond))
		vals = append(vals, v)
		h.add(v)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := float64(vals[int(q*float64(len(vals)))-1])
		got := float64(h.quantile(q))
		if got < exact*0.875 || got > exact*1.125 {
			t.Errorf("q%.2f = %v, exact %v", q, time.Duration(got), time.Duration(exact))
		}
	}
	st := h.stats()
	if st.Count != 10000 || st.Max != time.Duration(vals[len(vals)-1]) || st.Mean <= 0 {
		t.Errorf("stats %+v", st)
	}
	var empty waitHist
	if s := empty.stats(); s != (WaitStats{}) {
		t.Errorf("empty stats %+v", s)
	}
}
