package dbwait_test

import (
	"context"
	"runtime/trace"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/tracelog"
)

// TestEndLog: a statement whose region only marks the start (package
// agent's pgx tracer: pgx ends a query in Rows.Close, perhaps on another
// goroutine) lasts until its end log, written on another goroutine here.
func TestEndLog(t *testing.T) {
	tps := []string{
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203332-01",
	}
	const queryTime = 30 * time.Millisecond
	var began time.Time
	// The test's own timers bound each statement's app time from above: the
	// span from the first region's start to the end log (logged at most
	// ended[0] after began), and the second region's whole run (at most
	// ended[1]). On a busy host a 5 ms sleep has lasted 27 ms, so a bar
	// of the sleeps plus a margin would fail by chance.
	var ended [2]time.Duration
	tr := record(t, func(ctx context.Context) {
		ctx, task := trace.NewTask(ctx, "request")
		defer task.End()
		began = time.Now()
		// with an end log: the region is a mark, the rows are closed elsewhere
		trace.WithRegion(ctx, tracelog.SQLRegion, func() { trace.Log(ctx, tracelog.SQL, tps[0]) })
		done := make(chan struct{})
		go func() {
			time.Sleep(queryTime)
			trace.Log(ctx, tracelog.SQLEnd, tracelog.FormatSQLEnd(tps[0], time.Since(began)))
			ended[0] = time.Since(began)
			close(done)
		}()
		<-done
		// without one: database/sql's region spans the statement
		second := time.Now()
		trace.WithRegion(ctx, tracelog.SQLRegion, func() {
			trace.Log(ctx, tracelog.SQL, tps[1])
			time.Sleep(5 * time.Millisecond)
		})
		ended[1] = time.Since(second)
		// an end log whose start was before the trace
		trace.Log(ctx, tracelog.SQLEnd, tracelog.FormatSQLEnd("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203333-01", time.Millisecond))
	})
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "trace", tr)
	for i, tp := range tps {
		p, err := pglog.ParseTraceParent(tp)
		if err != nil {
			t.Fatal(err)
		}
		a.Statement(pglog.Statement{Start: began.Add(time.Duration(i) * 40 * time.Millisecond), Duration: time.Millisecond, TraceParent: p, SQL: "select 1"})
	}
	r, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.EndLogged != 1 || r.Summary.EndWithoutSpan != 1 || len(r.Queries) != 2 {
		t.Fatalf("summary %+v, %d queries", r.Summary, len(r.Queries))
	}
	for _, q := range r.Queries {
		want, most := queryTime, ended[0]
		if q.TraceParent.String() == tps[1] {
			want, most = 5*time.Millisecond, ended[1]
		}
		if q.App < want || q.App > most {
			t.Errorf("%s: app time %v, want from %v (the sleep) to %v (the test's own timer)", q.TraceParent, q.App, want, most)
		}
	}
}
