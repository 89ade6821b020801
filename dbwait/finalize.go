package dbwait

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/latscope/latscope/hostsig"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/pglog"
	"github.com/latscope/latscope/tracein"
)

// Finalize joins every span with its statement and classifies the time
// outside the database. It fails with ErrNoSpans, ErrNoMatch or
// ErrClockMismatch (wrapped with counts and a hint); smaller problems are
// Result.Warnings. The Analyzer must not be used afterwards.
func (a *Analyzer) Finalize() (*Result, error) {
	if len(a.spans) == 0 {
		return nil, a.noSpansError()
	}
	r := &Result{Options: a.opts, TraceStart: a.gaps.first}
	a.warnTrace(r)
	r.Warnings = append(r.Warnings, a.read...)
	if a.surplus > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%d statements were left out: their traceparent was already in the log %d times for each span that has it", a.surplus, maxStmtsPerTP))
	}
	if a.badDuration > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%d statement log lines were ignored: their duration did not parse (first: %q)", a.badDuration, a.badDurationMsg))
	}
	samples := a.hostSamples(r)
	if !a.clock.known() {
		for _, s := range samples {
			a.clock.add(tracein.Time(s.Mono), s.Wall)
		}
		a.clock.sort()
	}
	if a.clock.known() {
		r.TraceStartWall = a.clock.wall(a.gaps.first)
	} else {
		r.Warnings = append(r.Warnings, errors.New("the trace has no clock snapshot (Go 1.25+) and there are no host samples: statements are not placed in their spans, so the paused rule looks at the whole span"))
	}
	sort.SliceStable(a.spans, func(i, j int) bool { return a.spans[i].start < a.spans[j].start })
	a.join(r)
	if len(r.Queries) == 0 {
		return nil, a.noMatchError()
	}
	if err := a.checkClock(r); err != nil {
		return nil, err
	}
	for i := range r.Queries {
		q := &r.Queries[i]
		q.Evidence = a.evidence(q, samples)
		dec := Explain(q.Outside, q.Evidence, a.opts)
		q.Verdict, q.Rule, q.Confidence = dec.Verdict, dec.Rule, dec.Confidence
	}
	r.NetworkFloor, r.FloorStatements = networkFloor(r.Queries)
	if floor, n, warn := settleFloor(r.Queries, r.NetworkFloor, r.FloorStatements, a.opts.Threshold); warn != nil {
		r.Warnings = append(r.Warnings, warn)
		r.NetworkFloor, r.FloorStatements = floor, n
	}
	// Without a network floor, the wait past the usual statement's (inside
	// the database: its difference within the threshold) is weighed so.
	usual, nUsual := r.NetworkFloor, r.FloorStatements
	if usual == 0 {
		ds := make([]time.Duration, len(r.Queries))
		for i, q := range r.Queries {
			ds[i] = q.Outside
		}
		if med := quantile(ds, 0.5); med > 0 && med <= a.opts.Threshold && len(ds) >= minFloor {
			usual, nUsual = med, len(ds)
		}
	}
	for i := range r.Queries {
		q := &r.Queries[i]
		if usual > 0 && q.Evidence.Probe && q.Outside-usual > a.opts.Threshold {
			q.Evidence.FloorStall = a.floorStall(q, usual)
		}
		refloor(q, usual, nUsual, r.NetworkFloor == 0, a.opts)
		reweigh(q, r.NetworkFloor, r.FloorStatements)
	}
	a.dbHostCoverage(r)
	r.Summary = a.summarize(r)
	return r, nil
}

// warnTrace turns the trace's oddities into warnings.
func (a *Analyzer) warnTrace(r *Result) {
	if a.stray > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%d %s logs outside any region were ignored", a.stray, a.opts.SQLCategory))
	}
	if a.extra > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%d %s logs in a region that already had one were ignored: give each query its own region", a.extra, a.opts.SQLCategory))
	}
	if a.badTP > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%d %s logs are not traceparents, e.g. %s", a.badTP, a.opts.SQLCategory, a.badTPExample))
	}
	if a.badSample > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%d %s logs could not be decoded, e.g. %w", a.badSample, a.opts.HostCategory, a.badSampleErr))
	}
	open := 0
	for _, stack := range a.open {
		for _, o := range stack {
			if o.tp.IsValid() {
				open++
			}
		}
	}
	if open > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%d DB spans were still open at the end of the trace and are not counted", open))
	}
}

// hostSamples picks the samples of one process, in time order, without
// duplicates.
func (a *Analyzer) hostSamples(r *Result) []hostsig.Sample {
	if len(a.samples) == 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("no host samples (no %s logs in the trace, no samples file): outside time is classified unknown", a.opts.HostCategory))
		return nil
	}
	pid := a.opts.PID
	if pid == 0 {
		pid = a.samples[0].PID
	}
	var out []hostsig.Sample
	others := map[int]bool{}
	for _, s := range a.samples {
		if s.PID == pid {
			out = append(out, s)
		} else {
			others[s.PID] = true
		}
	}
	if len(others) > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("host samples of %d other processes ignored; using pid %d", len(others), pid))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Mono < out[j].Mono })
	out = slices.CompactFunc(out, func(x, y hostsig.Sample) bool { return x.Mono == y.Mono })
	r.Host = HostTotals{Samples: len(out), InTrace: a.inTrace > 0, Interval: medianSpacing(out)}
	if len(out) >= 2 {
		d := hostsig.Diff(out[0], out[len(out)-1])
		r.Host.Delta = &d
	}
	return out
}

func medianSpacing(s []hostsig.Sample) time.Duration {
	if len(s) < 2 {
		return 0
	}
	d := make([]time.Duration, len(s)-1)
	for i := range d {
		d[i] = s[i+1].Mono - s[i].Mono
	}
	return quantile(d, 0.5)
}

// join matches each span with an unused statement of the same
// traceparent: the one that fits the span best when the clocks are known.
func (a *Analyzer) join(r *Result) {
	used := map[pglog.TraceParent][]bool{}
	inFlight := 0
	defer func() {
		if inFlight > 0 {
			r.Warnings = append(r.Warnings, fmt.Errorf("%d statements are left out: their span only marks the start and no end log ended it (still in flight when the trace ended), so it is shorter than the statement", inFlight))
		}
	}()
	for _, sp := range a.spans {
		q := Query{Region: sp.name, G: sp.g, Task: sp.task, TraceParent: sp.tp, Start: sp.start, End: sp.end, App: sp.end.Sub(sp.start), runnable: sp.runnable}
		if a.clock.known() {
			q.StartWall = a.clock.wall(sp.start)
		}
		cands := a.stmts[sp.tp]
		if used[sp.tp] == nil {
			used[sp.tp] = make([]bool, len(cands))
		}
		best := -1
		var bestStick time.Duration
		for i, s := range cands {
			if used[sp.tp][i] {
				continue
			}
			stick := a.stickOut(sp, s)
			if best < 0 || stick < bestStick {
				best, bestStick = i, stick
			}
		}
		if best < 0 {
			r.Unmatched = append(r.Unmatched, q)
			continue
		}
		used[sp.tp][best] = true
		a.fill(&q, cands[best])
		if a.endLogged > 0 && !sp.endLogged && q.App < q.DB {
			// a start mark whose end log never came (the query was still
			// in flight when the trace ended): its span cannot hold the
			// statement
			inFlight++
			continue
		}
		r.Queries = append(r.Queries, q)
	}
}

// fill copies the statement into q.
func (a *Analyzer) fill(q *Query, s pglog.Statement) {
	q.Matched = true
	q.DB, q.PID, q.LockWait, q.SQL = s.Duration, s.PID, s.LockWait, s.SQL
	if !s.End.IsZero() {
		q.DBEnd = s.End.Add(-a.opts.PGClockOffset)
		q.DBStart = q.DBEnd.Add(-s.Duration)
	}
	q.Outside = q.App - q.DB
}

// stickOut is how far statement s lies outside span sp on the wall clock
// (0 when inside, or when either time is unknown).
func (a *Analyzer) stickOut(sp span, s pglog.Statement) time.Duration {
	if !a.clock.known() || s.End.IsZero() {
		return 0
	}
	end := s.End.Add(-a.opts.PGClockOffset)
	start := end.Add(-s.Duration)
	return max(0, a.clock.wall(sp.start).Sub(start), end.Sub(a.clock.wall(sp.end)))
}

// noMatchError says what was looked for and what the log holds: durations
// that did not parse, a log without statement durations, statements
// without a traceparent comment, or statements of another server or time.
func (a *Analyzer) noMatchError() error {
	commented := a.statements - a.uncommented
	hint := "the log is of another server or another time"
	switch {
	case a.badDuration > 0 && commented == 0:
		hint = fmt.Sprintf("%d of the log's %d lines have a duration that did not parse (first: %q); want PostgreSQL's \"duration: 12.345 ms  statement: …\"",
			a.badDuration, a.logLines, a.badDurationMsg)
	case a.statements == 0 && a.logLines > 0:
		hint = fmt.Sprintf("none of the log's %d lines is a statement with its duration: set log_min_duration_statement = 0 (docs/dbwait.md)", a.logLines)
	case commented == 0:
		hint = "the SQL carries no traceparent comment (prepend pglog.Comment(tp), e.g. /*traceparent='00-...'*/, to each statement), or the log is of another server"
	case a.badDuration > 0:
		hint += fmt.Sprintf("; also, %d lines have a duration that did not parse (first: %q)", a.badDuration, a.badDurationMsg)
	}
	return fmt.Errorf("%w: none of the %d traceparents logged in the trace is in the statement log (%d statements, %d with a traceparent comment): %s",
		ErrNoMatch, len(a.spans), a.statements, commented, hint)
}

// checkClock estimates the clock offset left between the database log and
// the trace and fails when most statements lie outside their spans.
func (a *Analyzer) checkClock(r *Result) error {
	if !a.clock.known() {
		return nil
	}
	var fixes []time.Duration // per statement, the smallest offset that puts it inside its span
	out := 0
	var worst time.Duration
	for _, q := range r.Queries {
		if q.DBEnd.IsZero() {
			continue
		}
		startW, endW := q.StartWall, a.clock.wall(q.End)
		lo, hi := q.DBEnd.Sub(endW), q.DBStart.Sub(startW) // offsets that would put the statement inside
		fixes = append(fixes, min(max(0, lo), max(hi, lo)))
		if stick := max(0, startW.Sub(q.DBStart), q.DBEnd.Sub(endW)); stick > a.opts.ClockTolerance {
			out++
			worst = max(worst, stick)
		}
	}
	if len(fixes) == 0 {
		return nil
	}
	r.ClockOffset = quantile(fixes, 0.5)
	switch {
	case out*2 > len(fixes):
		total := (a.opts.PGClockOffset + r.ClockOffset).Round(time.Microsecond)
		offset := opterr.Wrap("pg-clock-offset", errors.New(total.String()))
		given := ""
		if a.opts.PGClockOffset != 0 {
			given = fmt.Sprintf(" (with the %v given, %v more)", a.opts.PGClockOffset, r.ClockOffset.Round(time.Microsecond))
		}
		return fmt.Errorf("%w: %d of %d statements lie outside their app spans by more than %v (up to %v); the database clock looks %v ahead of the trace's%s: pass that offset (%w) if the database host's clock is off",
			ErrClockMismatch, out, len(fixes), a.opts.ClockTolerance, worst, total, given, offset)
	case out > 0:
		r.Warnings = append(r.Warnings, fmt.Errorf("%d of %d statements lie outside their app spans by more than %v (up to %v)", out, len(fixes), a.opts.ClockTolerance, worst))
	}
	return nil
}

// dbHostCoverage counts the statements the database host's recording
// covered, and warns when it did not cover them all: a recording of
// another time or host, or of backends it did not see from their start,
// leaves statements without that evidence.
func (a *Analyzer) dbHostCoverage(r *Result) {
	if a.dbhost == nil {
		return
	}
	c := &DBHostCoverage{From: a.dbhost.From, To: a.dbhost.To, Backends: a.dbhost.Backends(), Statements: len(r.Queries)}
	var pids []int
	for _, q := range r.Queries {
		if q.Evidence.DBHost {
			c.Covered++
		} else if len(pids) < 3 && q.PID != 0 {
			pids = append(pids, q.PID)
		}
	}
	r.DBHost = c
	if c.Covered == c.Statements {
		return
	}
	first, last := r.Queries[0].StartWall, r.Queries[len(r.Queries)-1].StartWall
	why := fmt.Sprintf("backends such as PID %v were not seen in it from before their statements", pids)
	if first.IsZero() {
		why = "the trace has no wall clock to place the statements in it"
	} else if last.Before(c.From) || first.After(c.To) {
		why = fmt.Sprintf("the statements ran %s–%s UTC, outside it (another time or host?)", first.UTC().Format("15:04:05"), last.UTC().Format("15:04:05"))
	}
	r.Warnings = append(r.Warnings, fmt.Errorf("the database host's recording (%s–%s UTC, %d backends) covers %d of %d statements: %s",
		c.From.UTC().Format("15:04:05.000"), c.To.UTC().Format("15:04:05.000"), c.Backends, c.Covered, c.Statements, why))
}
