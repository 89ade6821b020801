package sched

import (
	"encoding/json"
	"math"
	"math/bits"
	"time"

	"github.com/latscope/latscope/internal/units"
)

// waitHist is a log-scale histogram of durations with 8 buckets per power of
// two (quantiles within 9 % of the true value), exact count, sum and max.
type waitHist struct {
	counts [64 * histSub]int64
	n      int64
	sum    int64
	max    int64
}

const histSub = 8

func histBucket(ns int64) int {
	if ns < histSub {
		return int(max(ns, 0))
	}
	e := bits.Len64(uint64(ns)) - 1 // 2^e ≤ ns < 2^(e+1), e ≥ 3
	frac := int((uint64(ns) >> (e - 3)) & (histSub - 1))
	return (e-2)*histSub + frac
}

// histLower returns the smallest value in bucket b.
func histLower(b int) int64 {
	if b < histSub {
		return int64(b)
	}
	e, frac := b/histSub+2, b%histSub
	if e >= 62 {
		return math.MaxInt64
	}
	return int64(histSub+frac) << (e - 3)
}

func (h *waitHist) add(ns int64) {
	ns = max(ns, 0)
	h.counts[histBucket(ns)]++
	h.n++
	h.sum += ns
	h.max = max(h.max, ns)
}

// quantile returns an estimate of the q-quantile: the middle of its bucket.
func (h *waitHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen int64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := histLower(b), histLower(b+1)
			return time.Duration(min((lo+hi)/2, h.max))
		}
	}
	return time.Duration(h.max)
}

// WaitStats summarises the runnable wait after wakeups: from a goroutine
// becoming runnable (woken or created) to it running.
type WaitStats struct {
	Count                    int64
	Mean, P50, P90, P99, Max time.Duration
	Total                    time.Duration
}

// MarshalJSON writes the times in milliseconds, as all of latscope's JSON.
func (w WaitStats) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Count int64   `json:"count"`
		Mean  float64 `json:"mean_ms"`
		P50   float64 `json:"p50_ms"`
		P90   float64 `json:"p90_ms"`
		P99   float64 `json:"p99_ms"`
		Max   float64 `json:"max_ms"`
		Total float64 `json:"total_ms"`
	}{w.Count, units.Ms(w.Mean), units.Ms(w.P50), units.Ms(w.P90), units.Ms(w.P99), units.Ms(w.Max), units.Ms(w.Total)})
}

func (h *waitHist) stats() WaitStats {
	s := WaitStats{Count: h.n, Max: time.Duration(h.max), Total: time.Duration(h.sum)}
	if h.n > 0 {
		s.Mean = time.Duration(h.sum / h.n)
		s.P50, s.P90, s.P99 = h.quantile(0.50), h.quantile(0.90), h.quantile(0.99)
	}
	return s
}
