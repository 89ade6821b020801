package analysis

import (
	"math"
	"testing"
)

// TestRaised: the read loop's memory limit stays at memLimit while the live
// heap is small, follows liveFactor times a larger one (so the collector
// never runs without pause under it), and never passes or changes a limit
// the program set itself.
func TestRaised(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		inForce, ceiling int64
		live             uint64
		want             int64
		ok               bool
	}{
		{memLimit, math.MaxInt64, 40 * MiB, memLimit, false},
		{memLimit, math.MaxInt64, 85 * MiB, memLimit, false},  // 1.4 × 85 = 119 MiB
		{memLimit, math.MaxInt64, 100 * MiB, 140 * MiB, true}, // a larger live heap
		{140 * MiB, math.MaxInt64, 90 * MiB, 140 * MiB, false},
		{memLimit, 130 * MiB, 100 * MiB, 130 * MiB, true},   // never past the program's own
		{100 * MiB, 100 * MiB, 500 * MiB, 100 * MiB, false}, // the program's own: not ours
	} {
		got, ok := raised(c.inForce, c.ceiling, c.live)
		if got != c.want || ok != c.ok {
			t.Errorf("raised(%d MiB, %d, %d MiB) = %d MiB, %v; want %d MiB, %v", c.inForce/MiB, c.ceiling, c.live/MiB, got/MiB, ok, c.want/MiB, c.ok)
		}
	}
}
