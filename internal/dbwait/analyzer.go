package dbwait

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// Analyzer collects DB spans, statements and host samples, and joins and
// classifies them in Finalize. It keeps the spans, the statements with a
// traceparent, the samples and the trace's event-free stretches of at least
// gapMin; nothing else of the trace. It is not safe for concurrent use.
type Analyzer struct {
	opts Options

	open         map[tracein.GoID][]openRegion
	runnable     map[tracein.GoID]tracein.Time // goroutines now Runnable, since when
	spans        []span
	noTP         map[string]int // ended regions of a RegionNames type without a traceparent
	stray        int            // traceparent logs outside any region
	extra        int            // traceparent logs in a region that already had one
	badTP        int            // traceparent logs that do not parse
	badTPExample string

	// Statements whose region only marks the start end with an end log
	// (SQLEndCategory), perhaps on another goroutine. Until it comes, a
	// span stays pending on the goroutine that began it, which keeps
	// counting its runnable time.
	pending   map[tracein.GoID][]int    // indexes in spans, by querying goroutine
	byTP      map[pglog.TraceParent]int // index in spans of the last span of a traceparent
	endLogged int                       // spans ended by an end log
	endAlone  int                       // end logs with no span (the query began before the trace)

	gaps         gapList
	clock        clock
	samples      []hostsig.Sample
	inTrace      int // samples found in the trace
	badSample    int
	badSampleErr error

	stmts       map[pglog.TraceParent][]pglog.Statement
	statements  int // statements given, with or without a traceparent
	uncommented int
	// spanTPs counts the spans of each traceparent. Once the trace has
	// given spans, a statement whose traceparent no span has is only
	// counted (foreign), and a traceparent keeps at most maxStmtsPerTP
	// statements per span of it, plus maxStmtsPerTP (the rest counted in
	// surplus): the memory kept is bounded by the spans, not by the log.
	spanTPs map[pglog.TraceParent]int
	foreign int
	surplus int
	// history is what performance_schema history exports held.
	history historyLog
	// read holds the statement-log readers' notes (skipped records),
	// in the order read; Finalize makes them warnings.
	read []error

	logLines       int      // PostgreSQL log entries read (FeedPGLog)
	badDuration    int      // entries whose "duration: " did not parse
	badDurationMsg string   // the first of them, shortened
	probe          probeLog // the agent's CPU-availability probe
	busy           busyList // when every P ran a goroutine
	// dbhost is the database host's recording, or nil.
	dbhost *dbhost.Waits
	// pressure is the database host's CPU pressure counter, or nil.
	pressure *Pressure
}

// openRegion is a region begun on a goroutine and not yet ended.
type openRegion struct {
	name     string
	task     tracein.TaskID
	start    tracein.Time
	tp       pglog.TraceParent
	runnable time.Duration // the goroutine's time in state Runnable since start
}

// span is an ended region with a traceparent: one app DB call.
type span struct {
	name       string
	g          tracein.GoID
	task       tracein.TaskID
	start, end tracein.Time
	tp         pglog.TraceParent
	runnable   time.Duration
	// after is the querying goroutine's runnable time since the region
	// ended, added to runnable if an end log extends the span.
	after time.Duration
	// endLogged: an end log ended the span (its region only marked the
	// start).
	endLogged bool
}

// maxPending bounds the spans one goroutine keeps waiting for an end log:
// a goroutine runs its queries one after the other, or a few at once.
const maxPending = 8

// DBHost gives the analyser a recording of the database host's backends'
// run-queue waits (package dbhost), taken over the trace's time on the
// database's host; its clock is taken to be the database log's
// (Options.PGClockOffset applies to both).
func (a *Analyzer) DBHost(w *dbhost.Waits) { a.dbhost = w }

// dbHostSlack widens DBHostWindow: the recorder's pass that answers for a
// span's end may come late (it writes its gap), by far less than this.
const dbHostSlack = time.Minute

// DBHostWindow is the time a recording of the database host is read for
// (dbhost.ReadWindow), once the trace is fed: the trace's own time on the
// wall clock, on the database host's clock (Options.PGClockOffset), a
// minute wider on each side. ok is false when the trace has no clock
// snapshot: then the whole recording is needed.
func (a *Analyzer) DBHostWindow() (from, to time.Time, ok bool) {
	if !a.clock.known() || !a.gaps.seen {
		return time.Time{}, time.Time{}, false
	}
	from = a.clock.wall(a.gaps.first).Add(a.opts.PGClockOffset - dbHostSlack)
	to = a.clock.wall(a.gaps.last).Add(a.opts.PGClockOffset + dbHostSlack)
	return from, to, true
}

// New returns an Analyzer; zero fields of opts take DefaultOptions.
func New(opts Options) *Analyzer {
	return &Analyzer{
		opts:     opts.withDefaults(),
		open:     map[tracein.GoID][]openRegion{},
		runnable: map[tracein.GoID]tracein.Time{},
		noTP:     map[string]int{},
		stmts:    map[pglog.TraceParent][]pglog.Statement{},
		pending:  map[tracein.GoID][]int{},
		byTP:     map[pglog.TraceParent]int{},
		spanTPs:  map[pglog.TraceParent]int{},
	}
}

// Event takes the next record of the trace, in trace order: dbwait is one
// of the analysers of the read loop every command shares (analysis.Run).
func (a *Analyzer) Event(ev *tracein.Event) {
	a.gaps.add(ev.Time)
	a.busy.add(ev)
	switch ev.Kind {
	case tracein.KindSync:
		if !ev.Wall.IsZero() {
			a.clock.add(ev.Time, ev.Wall)
		}
	case tracein.KindRegionBegin:
		a.open[ev.G] = append(a.open[ev.G], openRegion{name: ev.Name, task: ev.Task, start: ev.Time})
	case tracein.KindRegionEnd:
		a.endRegion(ev)
	case tracein.KindGoState:
		a.goState(ev)
	case tracein.KindLog:
		switch ev.Name {
		case a.opts.SQLCategory:
			a.traceParentLog(ev)
		case a.opts.SQLEndCategory:
			a.endLog(ev)
		case a.opts.HostCategory:
			if !a.opts.NoTraceSamples {
				a.hostLog(ev.Message)
			}
		case tracelog.Probe:
			a.probe.add(ev.Time, ev.Message)
		}
	}
}

// endRegion closes the innermost open region of that type on the
// goroutine (and any left open inside it); an end whose begin preceded the
// trace is dropped.
func (a *Analyzer) endRegion(ev *tracein.Event) {
	stack := a.open[ev.G]
	i := len(stack) - 1
	for i >= 0 && stack[i].name != ev.Name {
		i--
	}
	if i < 0 {
		return
	}
	r := stack[i]
	if len(stack[:i]) == 0 {
		delete(a.open, ev.G)
	} else {
		a.open[ev.G] = stack[:i]
	}
	switch {
	case r.tp.IsValid():
		a.spans = append(a.spans, span{name: r.name, g: ev.G, task: r.task, start: r.start, end: ev.Time, tp: r.tp, runnable: r.runnable})
		a.spanTPs[r.tp]++
		a.byTP[r.tp] = len(a.spans) - 1
		p := append(a.pending[ev.G], len(a.spans)-1)
		if len(p) > maxPending {
			delete(a.byTP, a.spans[p[0]].tp)
			p = p[1:]
		}
		a.pending[ev.G] = p
	case slices.Contains(a.opts.RegionNames, r.name):
		a.noTP[r.name]++
	}
}

// goState adds the time a goroutine spent Runnable to its open regions.
func (a *Analyzer) goState(ev *tracein.Event) {
	if ev.From == tracein.Runnable {
		if since, ok := a.runnable[ev.G]; ok {
			delete(a.runnable, ev.G)
			stack := a.open[ev.G]
			for i := range stack {
				stack[i].runnable += ev.Time.Sub(max(since, stack[i].start))
			}
			for _, i := range a.pending[ev.G] {
				s := &a.spans[i]
				s.after += ev.Time.Sub(max(since, s.end))
			}
		}
	}
	if ev.To == tracein.Runnable {
		a.runnable[ev.G] = ev.Time
	}
}

// traceParentLog attaches a logged traceparent to the goroutine's innermost
// open region.
func (a *Analyzer) traceParentLog(ev *tracein.Event) {
	tp, err := pglog.ParseTraceParent(strings.TrimSpace(ev.Message))
	if err != nil {
		if a.badTP == 0 {
			a.badTPExample = termsafe.String(err.Error()) // from the trace's logs
		}
		a.badTP++
		return
	}
	stack := a.open[ev.G]
	switch {
	case len(stack) == 0:
		a.stray++
	case stack[len(stack)-1].tp.IsValid():
		a.extra++
	default:
		stack[len(stack)-1].tp = tp
	}
}

// endLog ends the span of a statement whose region only marked its start
// (package agent's pgx tracer): the span runs to the end log, on whichever
// goroutine it was written, and keeps the querying goroutine's runnable
// time until then.
func (a *Analyzer) endLog(ev *tracein.Event) {
	e, err := tracelog.ParseSQLEnd(strings.TrimSpace(ev.Message))
	if err != nil {
		if a.badTP == 0 {
			a.badTPExample = termsafe.String(err.Error()) // from the trace's logs
		}
		a.badTP++
		return
	}
	i, ok := a.byTP[e.TraceParent]
	if !ok {
		a.endAlone++
		return
	}
	delete(a.byTP, e.TraceParent)
	s := &a.spans[i]
	s.end = max(s.end, ev.Time)
	s.runnable += s.after
	s.endLogged = true
	a.endLogged++
	p := a.pending[s.g]
	if k := slices.Index(p, i); k >= 0 {
		p = slices.Delete(p, k, k+1)
	}
	if len(p) == 0 {
		delete(a.pending, s.g)
	} else {
		a.pending[s.g] = p
	}
}

// hostLog decodes a host sample logged into the trace.
func (a *Analyzer) hostLog(msg string) {
	s, err := hostsig.ParseLog(msg)
	if err != nil {
		if a.badSample == 0 {
			a.badSampleErr = err
		}
		a.badSample++
		return
	}
	a.inTrace++
	a.samples = append(a.samples, s)
}

// maxStmtsPerTP is how many statements per span of a traceparent are kept
// (statements of one traceparent are matched to its spans by how well they
// fit in time); maxStmtsPerTP more are kept for a traceparent of one span.
const maxStmtsPerTP = 16

// Statement takes one statement of the database's log. Statements without
// a traceparent are only counted. Once the trace has given spans (feed the
// trace first), so are statements whose traceparent no span has: memory
// stays bounded by the spans however long the log.
func (a *Analyzer) Statement(s pglog.Statement) {
	a.statements++
	if !s.TraceParent.IsValid() {
		a.uncommented++
		return
	}
	if len(a.spans) > 0 {
		n := a.spanTPs[s.TraceParent]
		switch {
		case n == 0:
			a.foreign++
			return
		case len(a.stmts[s.TraceParent]) >= maxStmtsPerTP*(n+1):
			a.surplus++
			return
		}
	}
	a.stmts[s.TraceParent] = append(a.stmts[s.TraceParent], s)
}

// CheckSpans returns Finalize's ErrNoSpans error when the trace fed so far
// has no DB span, so that a caller can stop before reading the database's
// log, which nothing could then join.
func (a *Analyzer) CheckSpans() error {
	if len(a.spans) == 0 {
		return a.noSpansError()
	}
	return nil
}

// Sample takes a host sample taken outside the trace (a samples file).
func (a *Analyzer) Sample(s hostsig.Sample) {
	a.samples = append(a.samples, s)
}

// noSpansError says why there is no span and how to add them.
func (a *Analyzer) noSpansError() error {
	hint := fmt.Sprintf("wrap each query in a region (trace.StartRegion(ctx, %q)) and log the traceparent sent in its SQL comment inside it: trace.Log(ctx, %q, tp.String()); package agent does this for pgx and database/sql",
		"sql", a.opts.SQLCategory)
	var found []string
	for _, n := range slices.Sorted(maps.Keys(a.noTP)) {
		found = append(found, fmt.Sprintf("%d %q regions without a traceparent logged inside (category %s)", a.noTP[n], n, a.opts.SQLCategory))
	}
	if a.stray > 0 {
		found = append(found, fmt.Sprintf("%d %s logs outside any region", a.stray, a.opts.SQLCategory))
	}
	if a.badTP > 0 {
		found = append(found, fmt.Sprintf("%d %s logs are not traceparents (%s)", a.badTP, a.opts.SQLCategory, a.badTPExample))
	}
	if len(found) > 0 {
		return fmt.Errorf("%w: %s; %s", ErrNoSpans, strings.Join(found, ", "), hint)
	}
	return fmt.Errorf("%w: no region holds a %s log; %s", ErrNoSpans, a.opts.SQLCategory, hint)
}
