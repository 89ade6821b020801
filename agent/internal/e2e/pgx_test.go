package e2e

import (
	"bytes"
	"context"
	"fmt"
	"runtime/trace"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/agent/agentpgx"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/tracelog"
)

// tracedConn connects to the tests' PostgreSQL with QueryTracer as the
// tracer, for the test's length.
func tracedConn(t *testing.T) *pgx.Conn {
	cfg := pgxConfig(t)
	cfg.Tracer = agentpgx.QueryTracer{}
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestPgx runs QueryTracer and SQLComment against a real PostgreSQL.
func TestPgx(t *testing.T) {
	tier.Timing(t)
	conn := tracedConn(t)
	var ran, ranRows string
	evs := agenttest.Traced(t, func() {
		ctx, task := agenttest.JobContext()
		defer task.End()
		if err := conn.QueryRow(ctx, "SELECT current_query() WHERE $1::int = 1", agentpgx.SQLComment{}, 1).Scan(&ran); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, "SELECT current_query() FROM generate_series(1, 3)", agentpgx.SQLComment{})
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			rows.Scan(&ranRows)
		}
		rows.Close()
		if _, err := conn.Exec(ctx, "SELECT 1"); err != nil { // traced, not commented
			t.Fatal(err)
		}
	})
	checkComment(t, evs, ran)
	checkComment(t, evs, ranRows)
	if n := len(agenttest.Logs(evs, tracelog.SQL)); n != 3 {
		t.Errorf("%d %s logs, want one per query (3)", n, tracelog.SQL)
	}
	begins, ends := 0, 0
	for _, ev := range evs {
		if ev.Name == tracelog.SQLRegion && ev.Kind == agenttest.KindRegionBegin {
			begins++
		}
		if ev.Name == tracelog.SQLRegion && ev.Kind == agenttest.KindRegionEnd {
			ends++
		}
	}
	if begins != 3 || ends != 3 {
		t.Errorf("%d region begins and %d ends, want 3 of each", begins, ends)
	}
}

// TestPgxRowsClosedElsewhere: rows read and closed on another goroutine, as
// in a pipeline, must leave a trace that parses (golang.org/x/exp/trace),
// with each query's span in it: the traceparent logged inside a region that
// begins and ends on the querying goroutine, and the query's end and
// duration logged where pgx ended it. Both goroutines run regions of their
// own around the query, which is what made a region ended on the wrong
// goroutine a parse error ("misuse of region").
func TestPgxRowsClosedElsewhere(t *testing.T) {
	tier.Timing(t)
	conn := tracedConn(t)
	tests := []struct {
		name string
		run  func(ctx context.Context) (pgx.Rows, error) // on the querying goroutine
		read func(rows pgx.Rows) error                   // on the other one
	}{
		{"Query, Close elsewhere", func(ctx context.Context) (pgx.Rows, error) {
			return conn.Query(ctx, "SELECT pg_sleep(0.02), 1")
		}, func(rows pgx.Rows) error { rows.Close(); return rows.Err() }},
		{"Query, Next to the end elsewhere", func(ctx context.Context) (pgx.Rows, error) {
			return conn.Query(ctx, "SELECT g FROM generate_series(1, 3) g", agentpgx.SQLComment{})
		}, func(rows pgx.Rows) error {
			for rows.Next() {
			}
			return rows.Err()
		}},
		{"QueryRow, Scan elsewhere", func(ctx context.Context) (pgx.Rows, error) {
			return conn.Query(ctx, "SELECT 1")
		}, func(rows pgx.Rows) error { _, err := pgx.CollectOneRow(rows, pgx.RowTo[int32]); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := trace.Start(&buf); err != nil {
				t.Fatal(err)
			}
			func() {
				defer trace.Stop()
				ctx, task := agenttest.JobContext()
				defer task.End()
				outer := trace.StartRegion(ctx, "handler")
				rows, err := tt.run(ctx)
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan error)
				go func() {
					defer trace.StartRegion(ctx, "consumer").End()
					done <- tt.read(rows)
				}()
				if err := <-done; err != nil {
					t.Error(err)
				}
				outer.End()
			}()
			raw := buf.Bytes()
			if err := agenttest.ParseAll(raw); err != nil {
				t.Fatalf("the trace does not parse: %v", err)
			}
			evs := agenttest.Events(t, t.Name(), bytes.NewReader(raw))
			starts := agenttest.Logs(evs, tracelog.SQL)
			ends := agenttest.Logs(evs, tracelog.SQLEnd)
			if len(starts) != 1 || len(ends) != 1 {
				t.Fatalf("%d %s logs and %d %s logs, want one of each", len(starts), tracelog.SQL, len(ends), tracelog.SQLEnd)
			}
			start, end := starts[0], ends[0]
			if !agenttest.InRegion(evs, start, tracelog.SQLRegion) {
				t.Errorf("%s log outside a %q region", tracelog.SQL, tracelog.SQLRegion)
			}
			e, err := tracelog.ParseSQLEnd(end.Message)
			if err != nil {
				t.Fatal(err)
			}
			if e.TraceParent.String() != start.Message {
				t.Errorf("end log %q: want the traceparent %s", end.Message, start.Message)
			}
			if start.G == end.G {
				t.Errorf("the end was logged on the querying goroutine; the test meant to end the query on another")
			}
			if d := end.Time.Sub(start.Time); e.Duration <= 0 || e.Duration > d+time.Millisecond {
				t.Errorf("duration_ns %v, want positive and at most the %v between the logs", e.Duration, d)
			}
			if start.Task != end.Task || start.Task == 0 {
				t.Errorf("logs in tasks %d and %d, want both in the request's task", start.Task, end.Task)
			}
			for _, ev := range evs {
				if ev.Name == tracelog.SQLRegion && ev.G != start.G {
					t.Errorf("%v of region %q on goroutine %d; the query ran on %d", ev.Kind, tracelog.SQLRegion, ev.G, start.G)
				}
				if ev.Name == tracelog.SQLRegion && ev.Kind == agenttest.KindRegionBegin {
					// The end log's time minus its duration is the start.
					skew := end.Time.Sub(ev.Time) - e.Duration
					t.Logf("query of %v; end log - duration - region begin = %v", e.Duration, skew)
					if skew < -10*time.Millisecond || skew > 10*time.Millisecond {
						t.Errorf("end log - duration_ns is %v from the region's begin, want within 10 ms", skew)
					}
				}
			}
		})
	}
}

// BenchmarkPgxStatementCache measures what a per-request comment does to
// pgx's statement cache: every commented statement is new to the cache.
func BenchmarkPgxStatementCache(b *testing.B) {
	url := pgtest.Shared(b).URL()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec} {
		for _, comment := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/comment=%v", mode, comment), func(b *testing.B) {
				cfg, err := pgx.ParseConfig(url)
				if err != nil {
					b.Fatal(err)
				}
				cfg.DefaultQueryExecMode = mode
				ctx := context.Background()
				conn, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close(ctx)
				args := []any{1}
				if comment {
					args = []any{agentpgx.SQLComment{}, 1}
				}
				var n int
				for b.Loop() {
					if err := conn.QueryRow(ctx, "SELECT $1::int + 1", args...).Scan(&n); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
