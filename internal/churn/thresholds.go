package churn

import (
	"encoding/json"
	"time"

	"github.com/latscope/latscope/internal/units"
)

// Thresholds decide findings and bursts. They come from the method
// (docs/sched.md); a zero field takes DefaultThresholds' value.
type Thresholds struct {
	// SchedShare is the share of CPU in the scheduler above which the
	// overhead is a finding: the rule of thumb "scan over 10–15 % deserves a look"
	// (docs/method.md §9), at its lower end.
	SchedShare float64 `json:"sched_share"`
	// MinSamples is the fewest CPU samples on which a share is judged; with
	// fewer, the 95 % interval of a 10 % share is wider than ±8 points.
	MinSamples int64 `json:"min_samples"`
	// BurstGap ends a burst: wakeups and creations closer than this to the
	// previous one belong to the same burst.
	BurstGap time.Duration `json:"-"` // JSON: burst_gap_ms
	// MinBurst is the size from which a burst is large: more goroutines
	// or threads woken at once than a small pool would ever need.
	MinBurst int `json:"min_burst"`
}

// MarshalJSON writes BurstGap in milliseconds.
func (t Thresholds) MarshalJSON() ([]byte, error) {
	type plain Thresholds
	return json.Marshal(struct {
		plain
		BurstGap float64 `json:"burst_gap_ms"`
	}{plain(t), units.Ms(t.BurstGap)})
}

// DefaultThresholds are the thresholds of `latscope analyze`, for both
// runtimes.
var DefaultThresholds = Thresholds{
	SchedShare: 0.10,
	MinSamples: 50,
	BurstGap:   time.Millisecond,
	MinBurst:   16,
}

// Or returns t with each threshold that is not set (zero or less) taken
// from d.
func (t Thresholds) Or(d Thresholds) Thresholds {
	if t.SchedShare <= 0 {
		t.SchedShare = d.SchedShare
	}
	if t.MinSamples <= 0 {
		t.MinSamples = d.MinSamples
	}
	if t.BurstGap <= 0 {
		t.BurstGap = d.BurstGap
	}
	if t.MinBurst <= 0 {
		t.MinBurst = d.MinBurst
	}
	return t
}
