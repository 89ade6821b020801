package agent

import (
	"context"
	"runtime/trace"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/tracelog"
	"github.com/latscope/latscope/pglog"
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
//   - TraceQueryStart writes a region named SQLRegion on the querying
//     goroutine, with the statement's traceparent logged inside it under
//     SQLLogCategory, and ends the region at once. The region marks where
//     and in which task the query began.
//   - TraceQueryEnd logs an SQLEnd (the traceparent and the query's
//     duration, measured from TraceQueryStart) under SQLEndLogCategory, on
//     whichever goroutine pgx ends the query, in the query's task.
//
// The query's span runs from the region's begin to the SQLEndLogCategory
// log with the same traceparent (docs/agent.md).
type QueryTracer struct{}

var _ pgx.QueryTracer = QueryTracer{}

// querySpan is one query's traceparent and start, kept in the context pgx
// hands from TraceQueryStart to the rest of the call.
type querySpan struct {
	tp    pglog.TraceParent
	text  string // tp.String(), for the end log
	start time.Time
}

type querySpanKey struct{}

// TraceQueryStart implements pgx.QueryTracer.
func (QueryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	qs := &querySpan{tp: callSpan(ctx), start: time.Now()}
	qs.text = qs.tp.String()
	r := trace.StartRegion(ctx, SQLRegion)
	trace.Log(ctx, SQLLogCategory, qs.text)
	r.End()
	return context.WithValue(ctx, querySpanKey{}, qs)
}

// TraceQueryEnd implements pgx.QueryTracer. It may run on any goroutine.
func (QueryTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	qs, ok := ctx.Value(querySpanKey{}).(*querySpan)
	if !ok || !trace.IsEnabled() {
		return
	}
	trace.Log(ctx, SQLEndLogCategory, tracelog.FormatSQLEnd(qs.text, time.Since(qs.start)))
}

// SQLComment is a pgx.QueryRewriter that prepends a sqlcommenter comment
// with the query's traceparent (the one QueryTracer logged, when it runs):
//
//	conn.Query(ctx, "SELECT ...", agent.SQLComment{}, args...)
//
// Every commented statement is unique, which defeats pgx's statement cache:
// use it with pgx.QueryExecModeExec or QueryExecModeSimpleProtocol (as the
// connection's DefaultQueryExecMode, or as an argument before SQLComment).
type SQLComment struct{}

var _ pgx.QueryRewriter = SQLComment{}

// RewriteQuery implements pgx.QueryRewriter.
func (SQLComment) RewriteQuery(ctx context.Context, _ *pgx.Conn, sql string, args []any) (string, []any, error) {
	return Comment(ctx, sql), args, nil
}

// Comment returns sql with a sqlcommenter comment carrying a traceparent
// prepended: that of the enclosing QueryTracer query, or else a new one
// from the request (callSpan), which it logs under SQLLogCategory. Use it
// with drivers latscope does not wrap.
func Comment(ctx context.Context, sql string) string {
	var tp pglog.TraceParent
	if qs, ok := ctx.Value(querySpanKey{}).(*querySpan); ok {
		tp = qs.tp
	} else {
		tp = callSpan(ctx)
		trace.Log(ctx, SQLLogCategory, tp.String())
	}
	return pglog.Comment(tp) + " " + sql
}
