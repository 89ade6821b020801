// Package agenttest holds what the tests of the agent and of its driver
// packages share: reading the trace a test recorded, and the checks of a
// query's span against a real PostgreSQL.
package agenttest

import (
	"bytes"
	"context"
	"io"
	"runtime/trace"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	xtrace "golang.org/x/exp/trace"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// Events reads the task, region and log records of a trace.
func Events(t testing.TB, name string, r io.Reader) []tracein.Event {
	t.Helper()
	tr, err := tracein.NewReader(name, r)
	if err != nil {
		t.Fatal(err)
	}
	var out []tracein.Event
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case tracein.KindLog, tracein.KindRegionBegin, tracein.KindRegionEnd, tracein.KindTaskBegin, tracein.KindTaskEnd:
			out = append(out, ev)
		}
	}
}

// Traced runs fn under runtime/trace and returns the trace's Events.
func Traced(t testing.TB, fn func()) []tracein.Event {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	func() {
		defer trace.Stop()
		fn()
	}()
	return Events(t, t.Name(), &buf)
}

// Logs returns the log records of category cat.
func Logs(evs []tracein.Event, cat string) []tracein.Event {
	var out []tracein.Event
	for _, ev := range evs {
		if ev.Kind == tracein.KindLog && ev.Name == cat {
			out = append(out, ev)
		}
	}
	return out
}

// InRegion reports whether the log ev happened inside an open region named
// region on its goroutine.
func InRegion(evs []tracein.Event, ev tracein.Event, region string) bool {
	depth := map[string]int{}
	for _, e := range evs {
		if e.G != ev.G {
			continue
		}
		switch {
		case e.Kind == tracein.KindRegionBegin:
			depth[e.Name]++
		case e.Kind == tracein.KindRegionEnd:
			depth[e.Name]--
		case e == ev:
			return depth[region] > 0
		}
	}
	return false
}

// ParseAll reads a whole trace with golang.org/x/exp/trace.
func ParseAll(raw []byte) error {
	r, err := xtrace.NewReader(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	for {
		if _, err := r.ReadEvent(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// JobSpan is the request span the SQL tests run under.
var JobSpan, _ = tracelog.ParseTraceParent("00-11111111111111111111111111111111-2222222222222222-01")

// JobContext returns a task context whose request span is JobSpan (what
// agent.ContextWithTraceParent makes).
func JobContext() (context.Context, *trace.Task) {
	ctx, task := trace.NewTask(context.Background(), "job")
	return context.WithValue(ctx, span.Key{}, &span.Info{TP: JobSpan}), task
}

// PgxConfig returns a pgx configuration for the tests' shared PostgreSQL,
// in exec mode (commented statements are unique).
func PgxConfig(t testing.TB) *pgx.ConnConfig {
	cfg, err := pgx.ParseConfig(pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	return cfg
}

// CheckComment checks that the statement text PostgreSQL ran carries a
// traceparent of JobSpan's trace that was logged inside an SQL region.
func CheckComment(t testing.TB, evs []tracein.Event, ran string) {
	t.Helper()
	tp, ok := pglog.FindTraceParent(ran)
	if !ok || !strings.HasPrefix(ran, "/*traceparent='") {
		t.Fatalf("PostgreSQL ran %q: want a leading sqlcommenter comment", ran)
	}
	if tp.TraceID != JobSpan.TraceID || tp.SpanID == JobSpan.SpanID {
		t.Errorf("comment %v: want the request's trace with a span of the query's own", tp)
	}
	for _, ev := range Logs(evs, tracelog.SQL) {
		if ev.Message == tp.String() {
			if !InRegion(evs, ev, tracelog.SQLRegion) {
				t.Errorf("%s log %q outside a %q region", tracelog.SQL, ev.Message, tracelog.SQLRegion)
			}
			return
		}
	}
	t.Errorf("no %s log of %v in the trace", tracelog.SQL, tp)
}
