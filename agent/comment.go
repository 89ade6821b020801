package agent

import (
	"context"
	"runtime/trace"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// Comment returns sql with a sqlcommenter comment carrying a new
// traceparent for the query prepended, a span in the request's trace, and
// logs it under tracelog.SQL. Use it, inside the query's region
// (tracelog.SQLRegion), with drivers latscope does not wrap; with pgx use
// package agentpgx.
func Comment(ctx context.Context, sql string) string {
	tp := span.Call(ctx)
	trace.Log(ctx, tracelog.SQL, tp.String())
	return tracelog.SQLComment(tp) + " " + sql
}
