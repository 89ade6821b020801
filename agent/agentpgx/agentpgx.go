// Package agentpgx is latscope's agent for pgx v5: a query tracer that
// marks each query in the execution trace, and a query rewriter that sends
// its traceparent in a SQL comment. It is apart from package agent so that
// services on database/sql do not compile pgx.
package agentpgx

import (
	"context"
	"runtime/trace"
	"time"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/span"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/tracelog"
)

// QueryTracer is a pgx v5 tracer (pgx.ConnConfig.Tracer) for Query,
// QueryRow and Exec. A pgx tracer cannot change the SQL; pass SQLComment
// among the arguments to send the traceparent in a comment.
//
// pgx calls TraceQueryStart on the goroutine that runs the query, and
// TraceQueryEnd wherever the query ends: inside Exec, but for Query and
// QueryRow in Rows.Close (or the Next or Scan that reaches the end), which
// may run on another goroutine. A region must begin and end on one
// goroutine, or the trace parser rejects the whole trace. So QueryTracer
// never holds a region open across pgx calls:
//
//   - TraceQueryStart writes a region named tracelog.SQLRegion on the querying
//     goroutine, with the statement's traceparent logged inside it under
//     tracelog.SQL, and ends the region at once. The region marks where
//     and in which task the query began.
//   - TraceQueryEnd logs an SQLEnd (the traceparent and the query's
//     duration, measured from TraceQueryStart) under tracelog.SQLEnd, on
//     whichever goroutine pgx ends the query, in the query's task.
//
// The query's span runs from the region's begin to the tracelog.SQLEnd
// log with the same traceparent (docs/agent.md). With the agent's
// Options.Metrics, the same duration is the query's DB call in the
// request's metrics (docs/metrics.md).
type QueryTracer struct{}

var _ pgx.QueryTracer = QueryTracer{}

// querySpan is one query's traceparent and start, kept in the context pgx
// hands from TraceQueryStart to the rest of the call.
type querySpan struct {
	tp    tracelog.TraceParent
	text  string // tp.String(), for the end log
	start time.Time
}

type querySpanKey struct{}

// TraceQueryStart implements pgx.QueryTracer.
func (QueryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	qs := &querySpan{tp: span.Call(ctx), start: time.Now()}
	qs.text = qs.tp.String()
	r := trace.StartRegion(ctx, tracelog.SQLRegion)
	trace.Log(ctx, tracelog.SQL, qs.text)
	r.End()
	return context.WithValue(ctx, querySpanKey{}, qs)
}

// TraceQueryEnd implements pgx.QueryTracer. It may run on any goroutine.
func (QueryTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	qs, ok := ctx.Value(querySpanKey{}).(*querySpan)
	if !ok {
		return
	}
	d := time.Since(qs.start)
	if ri := span.Of(ctx); ri.Metered() {
		ri.AddDB(d)
	}
	if trace.IsEnabled() {
		trace.Log(ctx, tracelog.SQLEnd, tracelog.FormatSQLEnd(qs.text, d))
	}
}

// SQLComment is a pgx.QueryRewriter that prepends a sqlcommenter comment
// with the query's traceparent (the one QueryTracer logged, when it runs):
//
//	conn.Query(ctx, "SELECT ...", agentpgx.SQLComment{}, args...)
//
// Every commented statement is unique, which defeats pgx's statement cache:
// use it with pgx.QueryExecModeExec or QueryExecModeSimpleProtocol (as the
// connection's DefaultQueryExecMode, or as an argument before SQLComment).
type SQLComment struct{}

var _ pgx.QueryRewriter = SQLComment{}

// RewriteQuery implements pgx.QueryRewriter.
func (SQLComment) RewriteQuery(ctx context.Context, _ *pgx.Conn, sql string, args []any) (string, []any, error) {
	if qs, ok := ctx.Value(querySpanKey{}).(*querySpan); ok {
		return tracelog.SQLComment(qs.tp) + " " + sql, args, nil
	}
	return agent.Comment(ctx, sql), args, nil
}
