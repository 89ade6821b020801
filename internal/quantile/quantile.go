// Package quantile is latscope's one definition of a percentile: the
// nearest rank. The q-quantile of n values is the value at 1-based rank
// ceil(q·n), clamped to [1, n]: always one of the values, q ≤ 0 gives the
// minimum and q ≥ 1 the maximum. Every percentile latscope prints (load,
// budget, dbwait, the agent's trigger) comes from here: it is a module of
// its own, which the agent's module and the main module both require.
package quantile

import "math"

// Rank is the 0-based index of the q-quantile of n values (n > 0).
func Rank(n int, q float64) int {
	if math.IsNaN(q) {
		q = 0
	}
	r := math.Ceil(q * float64(n))
	switch {
	case r < 1:
		return 0
	case r > float64(n):
		return n - 1
	}
	return int(r) - 1
}

// Sorted is the q-quantile of sorted (ascending); 0 for none.
func Sorted[T ~int64](sorted []T, q float64) T {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[Rank(len(sorted), q)]
}

// Select is the q-quantile of xs in any order, found by quickselect in
// linear expected time; it reorders xs. 0 for none.
func Select[T ~int64](xs []T, q float64) T {
	if len(xs) == 0 {
		return 0
	}
	k := Rank(len(xs), q)
	lo, hi := 0, len(xs)-1
	for lo < hi {
		pivot := median3(xs[lo], xs[lo+(hi-lo)/2], xs[hi])
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

func median3[T ~int64](a, b, c T) T {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	if a > b {
		b = a
	}
	return b
}
