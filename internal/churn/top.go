package churn

import "sort"

// Count is one frame's weight and its share of a total.
type Count struct {
	Frame  string
	Weight int64
	Share  float64
}

// Ratio is n/d, 0 when d is.
func Ratio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Top returns the n heaviest entries of m (all of them when n ≤ 0), ties
// by name, with their shares of total. The slice is never nil.
func Top(m map[string]int64, total int64, n int) []Count {
	out := make([]Count, 0, len(m))
	for f, w := range m {
		out = append(out, Count{Frame: f, Weight: w, Share: Ratio(w, total)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight > out[j].Weight
		}
		return out[i].Frame < out[j].Frame
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
