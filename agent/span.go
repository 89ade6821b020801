package agent

import (
	"context"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// SpanContextFunc returns the current span of ctx in another tracing system
// (OpenTelemetry: trace.SpanContextFromContext), for outbound calls and SQL
// comments to carry it; ok is false when ctx has none. See Options.SpanContext.
type SpanContextFunc func(ctx context.Context) (tp tracelog.TraceParent, ok bool)

// TraceParent returns the traceparent of the request ctx belongs to, as
// Handler made it (the incoming trace ID with a new span ID, or a new trace)
// or as ContextWithTraceParent set it. ok is false outside a request.
func TraceParent(ctx context.Context) (tp tracelog.TraceParent, ok bool) {
	ri := span.Of(ctx)
	if ri == nil {
		return tracelog.TraceParent{}, false
	}
	return ri.TP, true
}

// ContextWithTraceParent returns ctx with tp as its request span, for work
// that Handler does not see (queue consumers, jobs): outbound calls and
// queries under it then carry tp's trace ID.
func ContextWithTraceParent(ctx context.Context, tp tracelog.TraceParent) context.Context {
	return context.WithValue(ctx, span.Key{}, &span.Info{TP: tp})
}
