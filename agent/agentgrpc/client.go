package agentgrpc

import (
	"context"
	"runtime/trace"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// UnaryClient returns a unary client interceptor: each call runs in a
// region named tracelog.RPCRegionPrefix+method (cut to tracelog.MaxString
// bytes), the whole call, and carries a traceparent in its metadata, which
// is also logged in the region under tracelog.RPC. A valid traceparent the
// outgoing metadata already has is kept and logged; otherwise the call gets
// one as the agent's Transport gives an HTTP call one (the other tracing
// system's span when Options.SpanContext is set, else a new span in the
// request's trace). With the agent's Options.Metrics, a call under a
// request is timed and added to the request's outbound time, as an HTTP
// call through agent.Transport is.
func UnaryClient() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		defer trace.StartRegion(ctx, regionName(method)).End()
		ctx, tp := outgoing(ctx)
		trace.Log(ctx, tracelog.RPC, tp)
		ri := span.Of(ctx)
		if !ri.Metered() {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		ri.AddOutbound(time.Since(start))
		return err
	}
}

// StreamClient returns a stream client interceptor. A stream outlives the
// call that opens it and may be read on any goroutine, and a region must
// end on the goroutine that began it, in order with the others: so the
// region (named and logged as UnaryClient's) covers the stream's opening
// only, and where the stream ends — the RecvMsg that returns its end (an
// error, io.EOF for a clean end) or, for a stream without server
// streaming, its response — a tracelog.SpanEnd log gives the stream's
// traceparent and its duration from the opening, in the request's task,
// on whichever goroutine read it. A stream the client abandons without
// reading its end gets no end log.
func StreamClient() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		start := time.Now()
		region := trace.StartRegion(ctx, regionName(method))
		ctx, tp := outgoing(ctx)
		trace.Log(ctx, tracelog.RPC, tp)
		cs, err := streamer(ctx, desc, cc, method, opts...)
		region.End()
		ri := span.Of(ctx)
		if err != nil {
			if ri.Metered() {
				ri.AddOutbound(time.Since(start))
			}
			return cs, err
		}
		return &clientStream{ClientStream: cs, ctx: ctx, ri: ri, tp: tp, start: start, once: !desc.ServerStreams}, nil
	}
}

// clientStream logs its stream's end.
type clientStream struct {
	grpc.ClientStream
	ctx   context.Context // the request's, for the end log's task
	ri    *span.Info
	tp    string
	start time.Time
	once  bool // no server streaming: the first response ends the stream
	ended atomic.Bool
}

// RecvMsg implements grpc.ClientStream.
func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil || s.once {
		s.end()
	}
	return err
}

// end logs the stream's end, once.
func (s *clientStream) end() {
	if s.ended.Swap(true) {
		return
	}
	d := time.Since(s.start)
	if s.ri.Metered() {
		s.ri.AddOutbound(d)
	}
	if trace.IsEnabled() {
		trace.Log(s.ctx, tracelog.SpanEnd, tracelog.FormatSpanEnd(s.tp, d))
	}
}

// regionName is the region of an outbound RPC to method.
func regionName(method string) string {
	return tracelog.RPCRegionPrefix + tracelog.Bound(method, tracelog.MaxString-len(tracelog.RPCRegionPrefix))
}

// outgoing returns ctx with a traceparent in its outgoing metadata and that
// traceparent's text: the one the metadata has, when valid, else a new
// span (span.Call) appended to it.
func outgoing(ctx context.Context) (context.Context, string) {
	if md, ok := metadata.FromOutgoingContext(ctx); ok {
		if v := md.Get(traceParentKey); len(v) > 0 {
			if _, err := tracelog.ParseTraceParent(v[0]); err == nil {
				return ctx, v[0]
			}
		}
	}
	var buf [64]byte
	tp := string(tracelog.AppendTraceParent(buf[:0], span.Call(ctx)))
	return metadata.AppendToOutgoingContext(ctx, traceParentKey, tp), tp
}
