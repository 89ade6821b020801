package loadgen

import (
	"math/bits"
	"time"

	"github.com/latscope/latscope/internal/quantile"
)

// Percentile returns the p-th percentile (0–100) of sorted (ascending) by
// the nearest-rank method of package internal/quantile: the value at
// 1-based rank ceil(p/100 · n), clamped to [1, n]. So p <= 0 gives the
// minimum, p >= 100 the maximum, and every result is one of the values. It
// returns 0 for no values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	return quantile.Sorted(sorted, p/100)
}

// sum is an exact sum of non-negative durations: 128 bits cannot overflow
// for fewer than 2^64 values.
type sum struct{ hi, lo uint64 }

func (s *sum) add(d time.Duration) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(d), 0)
	s.hi += carry
}

// mean returns floor(sum/n), which lies between the smallest and largest
// value added; 0 for n == 0.
func (s sum) mean(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	q, _ := bits.Div64(s.hi, s.lo, uint64(n)) // hi < n: each value is < 2^63
	return time.Duration(q)
}
