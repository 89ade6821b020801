package agent

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"github.com/latscope/latscope/pglog"
)

// SpanContextFunc returns the current span of ctx in another tracing system
// (OpenTelemetry: trace.SpanContextFromContext), for outbound calls and SQL
// comments to carry it; ok is false when ctx has none. See Options.SpanContext.
type SpanContextFunc func(ctx context.Context) (tp pglog.TraceParent, ok bool)

// reqKey is the context key of a request's *reqInfo.
type reqKey struct{}

// reqInfo is what Handler puts into a request's context.
type reqInfo struct {
	tp          pglog.TraceParent // the request's own span
	spanContext SpanContextFunc   // nil unless Options.SpanContext is set
}

// TraceParent returns the traceparent of the request ctx belongs to, as
// Handler made it (the incoming trace ID with a new span ID, or a new trace)
// or as ContextWithTraceParent set it. ok is false outside a request.
func TraceParent(ctx context.Context) (tp pglog.TraceParent, ok bool) {
	ri, _ := ctx.Value(reqKey{}).(*reqInfo)
	if ri == nil {
		return pglog.TraceParent{}, false
	}
	return ri.tp, true
}

// ContextWithTraceParent returns ctx with tp as its request span, for work
// that Handler does not see (queue consumers, jobs): outbound calls and
// queries under it then carry tp's trace ID.
func ContextWithTraceParent(ctx context.Context, tp pglog.TraceParent) context.Context {
	return context.WithValue(ctx, reqKey{}, &reqInfo{tp: tp})
}

// callSpan returns the traceparent for one outbound call or query made under
// ctx: the other tracing system's current span when Options.SpanContext
// finds one (it owns span identity then), else a new span ID in the
// request's trace, else a new unsampled trace.
func callSpan(ctx context.Context) pglog.TraceParent {
	ri, _ := ctx.Value(reqKey{}).(*reqInfo)
	if ri == nil {
		return newTrace()
	}
	if ri.spanContext != nil {
		if tp, ok := ri.spanContext(ctx); ok && tp.IsValid() {
			return tp
		}
	}
	return childOf(ri.tp)
}

// requestSpan returns the span of a request whose incoming traceparent header
// is header: a child of it when it is valid, else a new trace.
func requestSpan(header string) pglog.TraceParent {
	if header != "" {
		if parent, err := pglog.ParseTraceParent(header); err == nil {
			return childOf(parent)
		}
	}
	return newTrace()
}

// childOf returns a new span in parent's trace, with parent's flags.
func childOf(parent pglog.TraceParent) pglog.TraceParent {
	if !parent.IsValid() {
		return newTrace()
	}
	tp := parent
	tp.SpanID = newSpanID()
	return tp
}

// newTrace returns a new trace with the sampled flag clear: latscope's own
// traces must not make downstream tracers record every request.
func newTrace() pglog.TraceParent {
	var tp pglog.TraceParent
	for tp.TraceID == [16]byte{} {
		binary.LittleEndian.PutUint64(tp.TraceID[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(tp.TraceID[8:], rand.Uint64())
	}
	tp.SpanID = newSpanID()
	return tp
}

// newSpanID returns a random non-zero span ID.
func newSpanID() [8]byte {
	var id [8]byte
	for id == [8]byte{} {
		binary.LittleEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}
