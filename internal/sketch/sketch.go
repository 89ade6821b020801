// Package sketch estimates percentiles of latencies too many to keep: a
// log-bucketed histogram (the DDSketch construction) whose every estimate
// is within RelErr of the true nearest-rank value, whatever the
// distribution, and whose memory grows with the logarithm of the range of
// the values, not with their number. Two sketches merge exactly: the merge
// equals the sketch of all the values. latscope keeps latencies exactly
// when it can (package quantile); this is for aggregates over many traces.
package sketch

import (
	"math"

	"github.com/latscope/latscope/internal/quantile"
)

// RelErr is the relative accuracy of every estimate: |estimate - v| ≤
// RelErr·v for the nearest-rank value v.
const RelErr = 0.005

var (
	gamma    = (1 + RelErr) / (1 - RelErr)
	logGamma = math.Log(gamma)
)

// Sketch is a mergeable percentile sketch of non-negative int64 values
// (nanoseconds). The zero value is empty and ready to use.
type Sketch struct {
	zeros    uint64   // values ≤ 0 (kept as 0)
	counts   []uint64 // counts[i] holds the values of bucket offset+i
	offset   int
	n        uint64
	min, max int64
}

// bucket is the index of the bucket holding v > 0: ⌈log_γ v⌉.
func bucket(v int64) int { return int(math.Ceil(math.Log(float64(v)) / logGamma)) }

// Add records v; a negative v counts as 0.
func (s *Sketch) Add(v int64) {
	v = max(v, 0)
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	if v == 0 {
		s.zeros++
		return
	}
	s.grow(bucket(v))
	s.counts[bucket(v)-s.offset]++
}

// grow extends counts to hold bucket b.
func (s *Sketch) grow(b int) {
	switch {
	case len(s.counts) == 0:
		s.counts, s.offset = make([]uint64, 1), b
	case b < s.offset:
		c := make([]uint64, len(s.counts)+s.offset-b)
		copy(c[s.offset-b:], s.counts)
		s.counts, s.offset = c, b
	case b >= s.offset+len(s.counts):
		s.counts = append(s.counts, make([]uint64, b-s.offset-len(s.counts)+1)...)
	}
}

// Merge adds every value of o to s.
func (s *Sketch) Merge(o *Sketch) {
	if o.n == 0 {
		return
	}
	if s.n == 0 || o.min < s.min {
		s.min = o.min
	}
	if s.n == 0 || o.max > s.max {
		s.max = o.max
	}
	s.n += o.n
	s.zeros += o.zeros
	if len(o.counts) == 0 {
		return
	}
	s.grow(o.offset)
	s.grow(o.offset + len(o.counts) - 1)
	for i, c := range o.counts {
		s.counts[o.offset+i-s.offset] += c
	}
}

// Count is the number of values added.
func (s *Sketch) Count() uint64 { return s.n }

// Min and Max are the exact least and greatest values (0 when empty).
func (s *Sketch) Min() int64 { return s.min }

// Max is the exact greatest value (0 when empty).
func (s *Sketch) Max() int64 { return s.max }

// Buckets is the number of buckets held: the sketch's memory, 8 bytes each.
func (s *Sketch) Buckets() int { return len(s.counts) }

// Quantile estimates the q-quantile by nearest rank (package quantile),
// within RelErr; the minimum and maximum are exact. 0 when empty.
func (s *Sketch) Quantile(q float64) int64 {
	if s.n == 0 {
		return 0
	}
	r := uint64(quantile.Rank(int(min(s.n, math.MaxInt)), q))
	switch {
	case r == 0:
		return s.min
	case r == s.n-1:
		return s.max
	case r < s.zeros:
		return 0
	}
	cum := s.zeros
	for i, c := range s.counts {
		cum += c
		if cum > r {
			est := int64(math.Round(2 * math.Pow(gamma, float64(s.offset+i)) / (gamma + 1)))
			return min(max(est, s.min), s.max)
		}
	}
	return s.max
}
