package dbwait

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/tracein"
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
	if w := a.historyWarning(r); w != nil {
		r.Warnings = append(r.Warnings, w)
	}
	if err := a.checkClock(r); err != nil {
		return nil, err
	}
	for i := range r.Queries {
		q := &r.Queries[i]
		q.Evidence = a.evidence(q, samples)
		dec := Explain(q.Outside, q.Evidence, a.opts)
		q.Verdict, q.Rule, q.Confidence = dec.Verdict, dec.Rule, dec.Confidence
		q.byPressure = dec.Verdict == Runnable && dec.Confidence == Low && pressureOnly(q.Outside, q.Evidence, a.opts)
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
	path := usualPath{wait: usual, n: nUsual, floor: r.NetworkFloor > 0}
	for i := range r.Queries {
		// after the floor: it is taken from the network verdicts as the
		// application's side of the evidence decided them
		q := &r.Queries[i]
		if q.byPressure && q.Verdict == Runnable && q.Confidence == Low { // not reweighed
			if dec, alt := yieldToProbe(q.Outside, q.Evidence, path); alt == DBCPU {
				q.Verdict, q.Rule, q.Confidence, q.Alternative = dec.Verdict, dec.Rule, dec.Confidence, alt
				continue
			}
		}
		dec, alt := hedge(Decision{q.Verdict, q.Rule, q.Confidence}, q.Evidence, q.Outside, path)
		q.Rule, q.Confidence, q.Alternative = dec.Rule, dec.Confidence, alt
	}
	a.dbHostCoverage(r)
	a.pressureCoverage(r)
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
	for _, n := range a.read {
		hint += fmt.Sprintf("; also, %v", n) // what was skipped might have matched
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
// covered, and when it did not cover them all, says why in one warning:
// each reason with its count and each backend named once (a recording of
// another time or host, one begun late or ended early, backends it has
// no line of or saw only after their statement began, a PID taken over).
func (a *Analyzer) dbHostCoverage(r *Result) {
	if a.dbhost == nil {
		return
	}
	c := &DBHostCoverage{From: a.dbhost.From, To: a.dbhost.To, Backends: a.dbhost.Backends(), Statements: len(r.Queries)}
	r.DBHost = c
	type group struct {
		n           int
		pids        map[int]bool
		first, last time.Time // the statements' starts
	}
	groups := map[dbhost.Miss]*group{}
	noClock, noPID := 0, 0
	for i := range r.Queries {
		q := &r.Queries[i]
		switch {
		case q.Evidence.DBHost:
			c.Covered++
			continue
		case q.StartWall.IsZero():
			noClock++
			continue
		case q.PID == 0:
			noPID++
			continue
		}
		from, to := a.dbHostWindow(q)
		_, miss := a.dbhost.Cover(q.PID, from, to)
		g := groups[miss]
		if g == nil {
			g = &group{pids: map[int]bool{}, first: q.StartWall, last: q.StartWall}
			groups[miss] = g
		}
		g.n++
		g.pids[q.PID] = true
		g.first, g.last = minTime(g.first, q.StartWall), maxTime(g.last, q.StartWall)
	}
	if c.Covered == c.Statements {
		return
	}
	var why []string
	if noClock > 0 {
		why = append(why, fmt.Sprintf("%s without a wall-clock time to place in it (the trace has no clock snapshot)", plural(noClock, "statement", "statements")))
	}
	if noPID > 0 {
		why = append(why, fmt.Sprintf("%s without a backend PID", plural(noPID, "statement", "statements")))
	}
	hhmmss := func(t time.Time) string { return t.UTC().Format("15:04:05") }
	for _, miss := range []dbhost.Miss{dbhost.OutsideTime, dbhost.NoBackend, dbhost.SeenLate, dbhost.WentBack, dbhost.EmptyWindow} {
		g := groups[miss]
		if g == nil {
			continue
		}
		switch miss {
		case dbhost.OutsideTime:
			if g.n == c.Statements && (g.last.Before(c.From) || g.first.After(c.To)) {
				why = append(why, fmt.Sprintf("the statements ran %s–%s UTC, outside it (another time or host?)", hhmmss(g.first), hhmmss(g.last)))
			} else {
				why = append(why, fmt.Sprintf("%s began before the recording or ended after it (%s–%s UTC)", plural(g.n, "statement", "statements"), hhmmss(g.first), hhmmss(g.last)))
			}
		case dbhost.NoBackend:
			why = append(why, fmt.Sprintf("%s of backends it has no line of (%s)", plural(g.n, "statement", "statements"), pidList(g.pids)))
		case dbhost.SeenLate:
			why = append(why, fmt.Sprintf("%s of backends it first saw after their statement began (%s)", plural(g.n, "statement", "statements"), pidList(g.pids)))
		case dbhost.WentBack:
			why = append(why, fmt.Sprintf("%s of backends whose run-queue counter went back, another process having taken the PID (%s)", plural(g.n, "statement", "statements"), pidList(g.pids)))
		default:
			why = append(why, fmt.Sprintf("%s with an empty span", plural(g.n, "statement", "statements")))
		}
	}
	r.Warnings = append(r.Warnings, fmt.Errorf("the database host's recording (%s–%s UTC, %s) covers %d of %d statements: %s",
		c.From.UTC().Format("15:04:05.000"), c.To.UTC().Format("15:04:05.000"), plural(c.Backends, "backend", "backends"), c.Covered, c.Statements, strings.Join(why, "; ")))
}

// pidList names each PID once, in order, the first five of them.
func pidList(set map[int]bool) string {
	pids := slices.Sorted(maps.Keys(set))
	const most = 5
	var b strings.Builder
	if len(pids) == 1 {
		fmt.Fprintf(&b, "PID %d", pids[0])
		return b.String()
	}
	b.WriteString("PIDs ")
	for i, p := range pids[:min(len(pids), most)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, p)
	}
	if len(pids) > most {
		fmt.Fprintf(&b, " and %d more", len(pids)-most)
	}
	return b.String()
}

// plural is "n one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
