package dbwait

import (
	"fmt"
	"sort"
	"time"
)

// PressureSample is one reading of the database host's CPU pressure
// counter as a metrics system scraped it: the cumulative time at least
// one task on the host waited for a CPU (Linux PSI "some", what
// node_exporter exports as node_pressure_cpu_waiting_seconds_total), at
// the scrape's time.
type PressureSample struct {
	At   time.Time
	Some time.Duration
}

// Pressure is the database host's CPU pressure counter over the trace's
// time, for when no recording of its backends (latscope dbhost) was
// taken but the host's metrics were: the hedge of a network verdict is
// then decided by the database host's own pressure instead of this
// host's (issue 34). Times are on the clock of whoever scraped the
// samples, taken to agree with the database host's (NTP); a scrape
// interval is seconds, so the pressure is known per interval, not per
// statement.
type Pressure struct {
	// Source names the series, for the verdicts' words: the metric, its
	// instance and where it was read.
	Source string
	// Samples in time order (Analyzer.DBHostPressure sorts them).
	Samples []PressureSample
}

// PressureDelta is the database host's CPU pressure over the scrape
// interval covering a statement: some task waited for a CPU Some of
// Interval.
type PressureDelta struct {
	Some, Interval time.Duration
	source         string // Pressure.Source, for the words
}

// busy tells whether the host was under CPU pressure for half the
// interval or more: the share every rule asks of its cause.
func (d PressureDelta) busy() bool { return 2*d.Some >= d.Interval }

// words gives the delta and its source.
func (d PressureDelta) words() string {
	return fmt.Sprintf("PSI some +%s ms in %s ms scraped, %s", fmtMs(d.Some), fmtMs(d.Interval), d.source)
}

// DBHostPressure gives the analyser the database host's CPU pressure
// counter (nil: none). Samples need not be in order.
func (a *Analyzer) DBHostPressure(p *Pressure) {
	if p != nil {
		sort.SliceStable(p.Samples, func(i, j int) bool { return p.Samples[i].At.Before(p.Samples[j].At) })
	}
	a.pressure = p
}

// over returns the pressure from the last sample at or before from to the
// first at or after to; ok is false when no samples surround the window
// or the counter went back between them (the exporter restarted).
func (p *Pressure) over(from, to time.Time) (PressureDelta, bool) {
	s := p.Samples
	i := sort.Search(len(s), func(i int) bool { return s[i].At.After(from) }) - 1
	j := sort.Search(len(s), func(k int) bool { return !s[k].At.Before(to) })
	if i < 0 || j >= len(s) || j <= i {
		return PressureDelta{}, false
	}
	for k := i + 1; k <= j; k++ {
		if s[k].Some < s[k-1].Some {
			return PressureDelta{}, false
		}
	}
	return PressureDelta{Some: s[j].Some - s[i].Some, Interval: s[j].At.Sub(s[i].At), source: p.Source}, true
}

// dbHostPressure is Evidence.DBHostPressure for q: the database host's
// pressure over q's span on that host's clock.
func (a *Analyzer) dbHostPressure(q *Query) *PressureDelta {
	if a.pressure == nil || q.StartWall.IsZero() {
		return nil
	}
	from, to := a.dbHostWindow(q)
	d, ok := a.pressure.over(from, to)
	if !ok {
		return nil
	}
	return &d
}

// pressureCoverage sets r.DBHostPressure and warns when the series
// covered none or only some of the joined statements.
func (a *Analyzer) pressureCoverage(r *Result) {
	p := a.pressure
	if p == nil {
		return
	}
	c := &PressureCoverage{Source: p.Source, Samples: len(p.Samples)}
	if n := len(p.Samples); n > 0 {
		c.From, c.To = p.Samples[0].At, p.Samples[n-1].At
	}
	for i := range r.Queries {
		if !r.Queries[i].Matched {
			continue
		}
		c.Statements++
		if r.Queries[i].Evidence.DBHostPressure != nil {
			c.Covered++
		}
	}
	r.DBHostPressure = c
	if c.Covered < c.Statements {
		r.Warnings = append(r.Warnings, fmt.Errorf("the database host's CPU pressure (%s, %d samples) covered %d of %d joined statements: the others fall outside its samples (%s), after a counter reset, or have no wall-clock time (the trace has no clock snapshot); their network verdicts are hedged by this host's pressure as without it",
			p.Source, c.Samples, c.Covered, c.Statements, c.SpanWords()))
	}
}

// SpanWords says when the series' samples were taken ("none" without
// any), in the words of the warning (and of the text report).
func (c *PressureCoverage) SpanWords() string {
	if c.Samples == 0 {
		return "none"
	}
	return c.From.UTC().Format(time.RFC3339) + " to " + c.To.UTC().Format(time.RFC3339)
}
