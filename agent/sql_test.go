package agent

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	xtrace "golang.org/x/exp/trace"

	"github.com/latscope/latscope/internal/tracelog"
	"github.com/latscope/latscope/pgcluster/pgtest"
	"github.com/latscope/latscope/pglog"
	"github.com/latscope/latscope/tracein"
)

// jobSpan is the request span the SQL tests run under.
var jobSpan, _ = pglog.ParseTraceParent("00-11111111111111111111111111111111-2222222222222222-01")

// checkComment checks that the statement text PostgreSQL ran carries a
// traceparent of jobSpan's trace that was logged inside an SQL region.
func checkComment(t *testing.T, evs []tracein.Event, ran string) {
	t.Helper()
	tp, ok := pglog.FindTraceParent(ran)
	if !ok || !strings.HasPrefix(ran, "/*traceparent='") {
		t.Fatalf("PostgreSQL ran %q: want a leading sqlcommenter comment", ran)
	}
	if tp.TraceID != jobSpan.TraceID || tp.SpanID == jobSpan.SpanID {
		t.Errorf("comment %v: want the request's trace with a span of the query's own", tp)
	}
	for _, ev := range logs(evs, SQLLogCategory) {
		if ev.Message == tp.String() {
			if !inRegion(evs, ev, SQLRegion) {
				t.Errorf("%s log %q outside a %q region", SQLLogCategory, ev.Message, SQLRegion)
			}
			return
		}
	}
	t.Errorf("no %s log of %v in the trace", SQLLogCategory, tp)
}

// jobContext returns a task context carrying jobSpan.
func jobContext() (context.Context, *trace.Task) {
	ctx, task := trace.NewTask(context.Background(), "job")
	return ContextWithTraceParent(ctx, jobSpan), task
}

func pgxConfig(t *testing.T) *pgx.ConnConfig {
	cfg, err := pgx.ParseConfig(pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	return cfg
}

// TestDatabaseSQL runs the database/sql wrapper over pgx's stdlib driver
// against a real PostgreSQL.
func TestDatabaseSQL(t *testing.T) {
	db := sql.OpenDB(WrapConnector(stdlib.GetConnector(*pgxConfig(t))))
	defer db.Close()
	var ran, ranExec string
	evs := traced(t, func() {
		ctx, task := jobContext()
		defer task.End()
		if err := db.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, "SELECT current_query() WHERE $1::int = 1", 1).Scan(&ran); err != nil {
			t.Fatal(err)
		}
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "CREATE TEMP TABLE q (s text)"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO q SELECT current_query()"); err != nil {
			t.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, "SELECT s FROM q WHERE s LIKE $1")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		if err := stmt.QueryRowContext(ctx, "%INSERT%").Scan(&ranExec); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	})
	checkComment(t, evs, ran)
	checkComment(t, evs, ranExec)
}

// TestWrapDriver registers the wrapped driver by name.
func TestWrapDriver(t *testing.T) {
	registerOnce.Do(func() { sql.Register("latscope-pgx", WrapDriver(stdlib.GetDefaultDriver())) })
	db, err := sql.Open("latscope-pgx", pgtest.Shared(t).URL()+"&default_query_exec_mode=exec")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ran string
	evs := traced(t, func() {
		ctx, task := jobContext()
		defer task.End()
		if err := db.QueryRowContext(ctx, "SELECT current_query()").Scan(&ran); err != nil {
			t.Fatal(err)
		}
	})
	checkComment(t, evs, ran)
}

var registerOnce sync.Once

// TestPgx runs QueryTracer and SQLComment against a real PostgreSQL.
func TestPgx(t *testing.T) {
	cfg := pgxConfig(t)
	cfg.Tracer = QueryTracer{}
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ran, ranRows string
	evs := traced(t, func() {
		ctx, task := jobContext()
		defer task.End()
		if err := conn.QueryRow(ctx, "SELECT current_query() WHERE $1::int = 1", SQLComment{}, 1).Scan(&ran); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, "SELECT current_query() FROM generate_series(1, 3)", SQLComment{})
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
	if n := len(logs(evs, SQLLogCategory)); n != 3 {
		t.Errorf("%d %s logs, want one per query (3)", n, SQLLogCategory)
	}
	begins, ends := 0, 0
	for _, ev := range evs {
		if ev.Name == SQLRegion && ev.Kind == tracein.KindRegionBegin {
			begins++
		}
		if ev.Name == SQLRegion && ev.Kind == tracein.KindRegionEnd {
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
	cfg := pgxConfig(t)
	cfg.Tracer = QueryTracer{}
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tests := []struct {
		name string
		run  func(ctx context.Context) (pgx.Rows, error) // on the querying goroutine
		read func(rows pgx.Rows) error                   // on the other one
	}{
		{"Query, Close elsewhere", func(ctx context.Context) (pgx.Rows, error) {
			return conn.Query(ctx, "SELECT pg_sleep(0.02), 1")
		}, func(rows pgx.Rows) error { rows.Close(); return rows.Err() }},
		{"Query, Next to the end elsewhere", func(ctx context.Context) (pgx.Rows, error) {
			return conn.Query(ctx, "SELECT g FROM generate_series(1, 3) g", SQLComment{})
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
				ctx, task := jobContext()
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
			if err := parseAll(raw); err != nil {
				t.Fatalf("the trace does not parse: %v", err)
			}
			evs := traceEvents(t, t.Name(), bytes.NewReader(raw))
			starts := logs(evs, SQLLogCategory)
			ends := logs(evs, SQLEndLogCategory)
			if len(starts) != 1 || len(ends) != 1 {
				t.Fatalf("%d %s logs and %d %s logs, want one of each", len(starts), SQLLogCategory, len(ends), SQLEndLogCategory)
			}
			start, end := starts[0], ends[0]
			if !inRegion(evs, start, SQLRegion) {
				t.Errorf("%s log outside a %q region", SQLLogCategory, SQLRegion)
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
				if ev.Name == SQLRegion && ev.G != start.G {
					t.Errorf("%v of region %q on goroutine %d; the query ran on %d", ev.Kind, SQLRegion, ev.G, start.G)
				}
				if ev.Name == SQLRegion && ev.Kind == tracein.KindRegionBegin {
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

// parseAll reads a whole trace with golang.org/x/exp/trace.
func parseAll(raw []byte) error {
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
