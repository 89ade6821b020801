package agentpgx

import (
	"context"
	"runtime/trace"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// The tests of QueryTracer and SQLComment against a real PostgreSQL are in
// agent/internal/e2e (TestPgx, TestPgxRowsClosedElsewhere, TestPgxMetrics,
// BenchmarkPgxStatementCache): PostgreSQL's test cluster lives in the main
// module, which this module does not require.

// BenchmarkQueryTracer measures QueryTracer's TraceQueryStart and
// TraceQueryEnd for one query, with the flight recorder on, against the
// single region it used to hold open across the two (begin and log at
// start, end at end; unsafe when rows close on another goroutine).
func BenchmarkQueryTracer(b *testing.B) {
	a, err := agent.New(agent.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ctx, task := trace.NewTask(agent.ContextWithTraceParent(context.Background(), agenttest.JobSpan), "job")
	defer task.End()
	b.Run("agent", func(b *testing.B) {
		var qt QueryTracer
		for b.Loop() {
			qt.TraceQueryEnd(qt.TraceQueryStart(ctx, nil, pgx.TraceQueryStartData{}), nil, pgx.TraceQueryEndData{})
		}
	})
	b.Run("one-region-baseline", func(b *testing.B) {
		for b.Loop() {
			r := trace.StartRegion(ctx, tracelog.SQLRegion)
			trace.Log(ctx, tracelog.SQL, span.Call(ctx).String())
			qctx := context.WithValue(ctx, querySpanKey{}, r)
			qctx.Value(querySpanKey{}).(*trace.Region).End()
		}
	})
}
