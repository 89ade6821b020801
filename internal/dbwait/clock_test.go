package dbwait

import (
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tracein"
)

// TestClockDrift: a wall clock that gains 5 ms a second on the monotonic
// one (as this project's VM's did for minutes) is interpolated between
// snapshots a second apart, not taken at slope 1 from the last one, which
// erred by up to 5 ms; outside the snapshots it goes on at slope 1.
func TestClockDrift(t *testing.T) {
	w0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var c clock
	for i := range 4 {
		c.add(tracein.Time(int64(i)*int64(time.Second)), w0.Add(time.Duration(i)*1005*time.Millisecond))
	}
	for _, tc := range []struct {
		t    time.Duration
		want time.Duration // from w0
	}{
		{0, 0},
		{500 * time.Millisecond, 502500 * time.Microsecond},
		{2900 * time.Millisecond, 2914500 * time.Microsecond},
		{3500 * time.Millisecond, 3515 * time.Millisecond}, // past the last: slope 1
		{-time.Second, -time.Second},                       // before the first: slope 1
	} {
		tt := tracein.Time(int64(tc.t))
		if got := c.wall(tt).Sub(w0); got != tc.want {
			t.Errorf("wall(%v) = w0%+v, want w0%+v", tc.t, got, tc.want)
		}
		if back := c.trace(c.wall(tt)); back-tt > 1 || tt-back > 1 {
			t.Errorf("trace(wall(%v)) = %v", tc.t, time.Duration(back))
		}
	}
}
