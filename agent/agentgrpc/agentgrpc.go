// Package agentgrpc is latscope's agent for grpc-go: server interceptors
// that make each RPC a request of the agent (a runtime/trace task named by
// its full method, with the caller's traceparent from the metadata, the
// agent's metrics and slow-request snapshots), and client interceptors that
// mark each outbound RPC and send its traceparent in the metadata. It is a
// module of its own so that services without gRPC never compile grpc-go.
//
//	s := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(agentgrpc.UnaryServer(a)),
//		grpc.ChainStreamInterceptor(agentgrpc.StreamServer(a)),
//	)
//	cc, err := grpc.NewClient(target,
//		grpc.WithChainUnaryInterceptor(agentgrpc.UnaryClient()),
//		grpc.WithChainStreamInterceptor(agentgrpc.StreamClient()),
//		…)
//
// What goes into the trace (docs/agent.md, "gRPC"; the names are package
// tracelog's):
//
//   - per RPC served, a task named tracelog.RPCRequestPrefix and the full
//     method ("grpc /pkg.Service/Method", as the analyser names an RPC it
//     infers without the interceptors),
//     from the interceptor's call to its return (the handler, the request's
//     decoding and the response's encoding for a unary RPC; the whole stream
//     for a streaming one), begun by the agent's BeginContext (as Begin
//     begins a router's request); a tracelog.Request log with the RPC's traceparent at its start,
//     and a tracelog.Slow log in slow RPCs;
//   - per outbound unary RPC, a region tracelog.RPCRegionPrefix+method
//     around the call, with a tracelog.RPC log of the traceparent sent;
//   - per outbound stream, that region around the stream's opening and, where
//     the stream ends (on whichever goroutine reads its end), a
//     tracelog.SpanEnd log of its traceparent and its duration from the
//     opening.
package agentgrpc

import (
	"context"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/tracelog"
)

// traceParentKey is the W3C Trace Context key, in gRPC metadata as in an
// HTTP header (metadata keys are lower case).
const traceParentKey = "traceparent"

// UnaryServer returns a unary server interceptor that makes each RPC a
// request of a (see the package comment). Put it first in the chain, so
// that the task covers the other interceptors.
func UnaryServer(a *agent.Agent) grpc.UnaryServerInterceptor {
	var names requestNames
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, q := begin(a, ctx, names.of(info.FullMethod))
		defer q.End()
		return handler(ctx, req)
	}
}

// StreamServer returns a stream server interceptor that makes each
// streaming RPC a request of a, from the stream's start to the handler's
// return (see the package comment). Put it first in the chain.
func StreamServer(a *agent.Agent) grpc.StreamServerInterceptor {
	var names requestNames
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, q := begin(a, ss.Context(), names.of(info.FullMethod))
		defer q.End()
		if q == nil { // already a request: the stream keeps its context
			return handler(srv, ss)
		}
		return handler(srv, &serverStream{ServerStream: ss, ctx: ctx})
	}
}

// serverStream is a ServerStream whose context is the request's.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the request's context.
func (s *serverStream) Context() context.Context { return s.ctx }

// maxNames bounds requestNames: a server's methods are few, but an
// unknown-service handler sees whatever methods its callers send.
const maxNames = 1000

// requestNames keeps each method's request name
// (tracelog.RPCRequestPrefix+method), so that an RPC does not build its
// name again: one string per method, up to maxNames methods.
type requestNames struct {
	m sync.Map // method → name
	n atomic.Int32
}

// of returns method's request name.
func (r *requestNames) of(method string) string {
	if v, ok := r.m.Load(method); ok {
		return v.(string)
	}
	name := tracelog.RPCRequestPrefix + method
	if r.n.Load() < maxNames {
		if _, loaded := r.m.LoadOrStore(method, name); !loaded {
			r.n.Add(1)
		}
	}
	return name
}

// begin starts an RPC's request named name with the agent's
// BeginContext, the caller's traceparent taken from the metadata. It
// returns the request's context and the request to End (nil when ctx was
// already a request of the agent's: the RPC then keeps that request,
// counted once).
func begin(a *agent.Agent, ctx context.Context, name string) (context.Context, *agent.Request) {
	var tp string
	if tps := metadata.ValueFromIncomingContext(ctx, traceParentKey); len(tps) > 0 {
		tp = tps[0]
	}
	return a.BeginContext(ctx, name, tp) // it logs the RPC's traceparent (tracelog.Request) in its task
}
