package pprofexport

import (
	"math/bits"
	"slices"
	"sort"

	"github.com/latscope/latscope/internal/tracein"
)

// share is one stack's part of a split.
type share struct {
	stack tracein.StackID
	v     int64
}

// split divides total nanoseconds over stacks in proportion to their
// sample counts, exactly: the parts sum to total (largest remainder).
// Stacks are visited in StackID order so the result is reproducible.
func split(total int64, samples map[tracein.StackID]int) []share {
	ids := make([]tracein.StackID, 0, len(samples))
	var n uint64
	for id, c := range samples {
		if c > 0 {
			ids = append(ids, id)
			n += uint64(c)
		}
	}
	if total <= 0 || n == 0 {
		return nil
	}
	slices.Sort(ids)
	out := make([]share, len(ids))
	rems := make([]uint64, len(ids))
	var given int64
	for i, id := range ids {
		hi, lo := bits.Mul64(uint64(total), uint64(samples[id]))
		q, r := bits.Div64(hi, lo, n) // hi < n because the quotient ≤ total
		out[i], rems[i] = share{id, int64(q)}, r
		given += int64(q)
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rems[order[a]] > rems[order[b]] })
	for i := 0; given < total; i++ {
		out[order[i%len(order)]].v++
		given++
	}
	return out
}
