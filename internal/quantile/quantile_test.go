package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/quick"
	"time"
)

func TestSorted(t *testing.T) {
	xs := []time.Duration{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for _, tt := range []struct {
		q    float64
		want time.Duration
	}{
		{-1, 10}, {0, 10}, {0.05, 10}, {0.1, 10}, {0.11, 20}, {0.5, 50}, {0.9, 90}, {0.91, 100}, {0.99, 100}, {1, 100}, {2, 100}, {math.NaN(), 10},
	} {
		if got := Sorted(xs, tt.q); got != tt.want {
			t.Errorf("Sorted(q=%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if Sorted([]int64(nil), 0.5) != 0 || Select([]int64(nil), 0.5) != 0 {
		t.Error("no values: want 0")
	}
	// p99 of 100·k values is the 99·k-th, not the next one up
	var hundred []int64
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, int64(i))
	}
	if got := Sorted(hundred, 0.99); got != 99 {
		t.Errorf("p99 of 1..100 = %d, want 99", got)
	}
}

// TestSelect: quickselect agrees with sorting, whatever the order and
// however many ties.
func TestSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(200)
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = r.Int64N(int64(1 + trial%50))
		}
		q := r.Float64()
		s := slices.Sorted(slices.Values(xs))
		if got, want := Select(slices.Clone(xs), q), Sorted(s, q); got != want {
			t.Fatalf("n=%d q=%v: Select %d, Sorted %d", n, q, got, want)
		}
	}
}

func TestSelectNearestRank(t *testing.T) {
	tests := []struct {
		xs   []int64
		p    float64
		want int64
	}{
		{nil, 99, 0},
		{[]int64{7}, 99, 7},
		{[]int64{4, 1, 3, 2}, 50, 2},
		{[]int64{4, 1, 3, 2}, 99, 4},
		{[]int64{4, 1, 3, 2}, 1, 1},
	}
	for _, tt := range tests {
		if got := Select(append([]int64(nil), tt.xs...), tt.p/100); got != tt.want {
			t.Errorf("Select(%v, p%v) = %d, want %d", tt.xs, tt.p, got, tt.want)
		}
	}
}

// TestSelectProperty: the p-th percentile is an element with at least
// p % of the elements at or below it.
func TestSelectProperty(t *testing.T) {
	f := func(xs []int64, p8 uint8) bool {
		if len(xs) == 0 {
			return true
		}
		p := float64(p8%99) + 1
		v := Select(append([]int64(nil), xs...), p/100)
		le, found := 0, false
		for _, x := range xs {
			if x <= v {
				le++
			}
			found = found || x == v
		}
		return found && float64(le) >= p/100*float64(len(xs))
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}
