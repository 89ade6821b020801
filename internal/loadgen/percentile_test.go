package loadgen

import (
	"math"
	"slices"
	"testing"
	"testing/quick"
	"time"
)

func TestPercentile(t *testing.T) {
	ten := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one p0", []time.Duration{7}, 0, 7},
		{"one p50", []time.Duration{7}, 50, 7},
		{"one p100", []time.Duration{7}, 100, 7},
		{"ten p0 is min", ten, 0, 1},
		{"ten p10", ten, 10, 1},
		{"ten p11 rounds rank up", ten, 11, 2},
		{"ten p50", ten, 50, 5},
		{"ten p90", ten, 90, 9},
		{"ten p99", ten, 99, 10},
		{"ten p100", ten, 100, 10},
		{"above 100 clamps", ten, 150, 10},
		{"negative clamps", ten, -5, 1},
		{"NaN is p0", ten, math.NaN(), 1},
		// Nearest rank on four values: p50 is rank 2, p51 rank 3.
		{"four p50", []time.Duration{10, 20, 30, 40}, 50, 20},
		{"four p51", []time.Duration{10, 20, 30, 40}, 51, 30},
		{"four p75", []time.Duration{10, 20, 30, 40}, 75, 30},
		{"four p76", []time.Duration{10, 20, 30, 40}, 76, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

// TestReportLatencyProperties: for any latencies, min ≤ p50 ≤ p90 ≤ p99 ≤
// max, min ≤ mean ≤ max, and every percentile is one of the values.
func TestReportLatencyProperties(t *testing.T) {
	f := func(raw []uint64) bool {
		var rp Report
		for _, v := range raw {
			rp.Add(&Result{Latency: time.Duration(v >> 1)}) // any non-negative duration
		}
		rp.Close()
		l := rp.Latency
		if len(raw) == 0 {
			return l == Latencies{}
		}
		ordered := l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max
		meanIn := l.Min <= l.Mean && l.Mean <= l.Max
		vals := make([]time.Duration, len(raw))
		for i, v := range raw {
			vals[i] = time.Duration(v >> 1)
		}
		member := slices.Contains(vals, l.P50) && slices.Contains(vals, l.P90) && slices.Contains(vals, l.P99)
		return ordered && meanIn && member && l.Min == slices.Min(vals) && l.Max == slices.Max(vals)
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500}); err != nil {
		t.Error(err)
	}
}

func TestMeanExact(t *testing.T) {
	tests := []struct {
		vals []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{1, 2}, 1}, // floor of 1.5
		{[]time.Duration{3, 3, 3}, 3},
		// The plain int64 sum would overflow; the mean is still exact.
		{[]time.Duration{math.MaxInt64, math.MaxInt64, math.MaxInt64 - 3}, math.MaxInt64 - 1},
	}
	for _, tt := range tests {
		var s sum
		for _, v := range tt.vals {
			s.add(v)
		}
		if got := s.mean(len(tt.vals)); got != tt.want {
			t.Errorf("mean(%v) = %v, want %v", tt.vals, got, tt.want)
		}
	}
}
