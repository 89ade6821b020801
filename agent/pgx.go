package agent

import (
	"context"
	"runtime/trace"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/pglog"
)

// QueryTracer is a pgx v5 tracer (pgx.ConnConfig.Tracer): each Query,
// QueryRow and Exec runs in a region named SQLRegion, inside which the
// statement's traceparent is logged under SQLLogCategory. A pgx tracer
// cannot change the SQL; pass SQLComment among the arguments to send the
// same traceparent in a comment.
//
// pgx ends a Query's region when its Rows are closed: close them on the
// goroutine that ran the query (see the package's BUG note).
type QueryTracer struct{}

var _ pgx.QueryTracer = QueryTracer{}

// querySpan is one query's region and traceparent, kept in the context pgx
// hands from TraceQueryStart to the rest of the call.
type querySpan struct {
	region *trace.Region
	tp     pglog.TraceParent
}

type querySpanKey struct{}

// TraceQueryStart implements pgx.QueryTracer.
func (QueryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	qs := &querySpan{region: trace.StartRegion(ctx, SQLRegion), tp: callSpan(ctx)}
	trace.Log(ctx, SQLLogCategory, qs.tp.String())
	return context.WithValue(ctx, querySpanKey{}, qs)
}

// TraceQueryEnd implements pgx.QueryTracer.
func (QueryTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if qs, ok := ctx.Value(querySpanKey{}).(*querySpan); ok && qs.region != nil {
		qs.region.End()
		qs.region = nil
	}
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
