package budget

import (
	"fmt"
	"time"
)

// CoverageLow and CoverageHigh bound, in percent of the mean, what
// critical-path waits plus independent CPU must explain (docs/method.md §6,
// "The coverage band").
const CoverageLow, CoverageHigh = 95.0, 103.0

// Coverage says how much of a group's mean latency each view explains
// (docs/method.md §4 and §6). Shares are fractions of the mean.
type Coverage struct {
	WaitSum      float64       // off-CPU goroutine time
	GoroutineSum float64       // all goroutine time: waits, running, runnable
	Critical     float64       // the critical path (waits, running, runnable, unknown)
	Unknown      time.Duration // critical time the timelines could not explain, per request
	// With an independent CPU reading (HasIndependent): critical waits +
	// critical runnable + independent CPU per request, and what of the
	// mean that leaves unexplained.
	HasIndependent bool
	Independent    float64
	Unexplained    time.Duration
}

// Coverage returns g's coverage; cpu is the independent CPU per request
// (ok false without one).
func (g *Group) Coverage(cpu time.Duration, ok bool) Coverage {
	n := float64(max(g.Count, 1))
	c := Coverage{Unknown: time.Duration(float64(g.Unknown) / n)}
	mean := g.Latency.Mean
	if mean <= 0 {
		return c
	}
	var wait, critWait float64
	for _, ts := range g.Terms {
		wait += float64(ts.Wait)
		critWait += float64(ts.Critical)
	}
	c.WaitSum = wait / n / mean
	c.GoroutineSum = (wait + float64(g.Running.Wait+g.Runnable.Wait)) / n / mean
	c.Critical = (critWait + float64(g.Running.Critical+g.Runnable.Critical+g.Unknown)) / n / mean
	if ok {
		explained := (critWait+float64(g.Runnable.Critical))/n + float64(cpu)
		c.HasIndependent = true
		c.Independent = explained / mean
		c.Unexplained = time.Duration(mean - explained)
	}
	return c
}

// Finding returns the coverage finding for group when the independent
// coverage is outside the band, else nil.
func (c Coverage) Finding(group string) *Finding {
	pct := 100 * c.Independent
	if !c.HasIndependent || (pct >= CoverageLow && pct <= CoverageHigh) {
		return nil
	}
	return &Finding{Kind: FindCoverage, Group: group, Text: fmt.Sprintf(
		"%s: critical-path waits plus independent CPU explain %.1f%% of the mean (%.1f ms unexplained); outside %g–%g%% the budget misses something (CPU outside requests divided in, throttling, or time the trace cannot see)",
		group, pct, float64(c.Unexplained)/1e6, CoverageLow, CoverageHigh)}
}
