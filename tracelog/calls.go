package tracelog

import (
	"strings"
	"time"
)

// Requests and calls that other instrumentation marks: gRPC (the agent's
// interceptors, agent/agentgrpc) and OpenTelemetry (the span processor of
// agent/agentotel). docs/agent.md, "The trace-log contract", has the table.
const (
	// Request: inside a request's task, right after the task begins, on
	// the goroutine that began it: the request's own traceparent
	// ("00-<trace>-<span>-<flags>"). agentotel logs the server span's trace
	// and span IDs (so a request is found by the trace ID a tracing UI
	// shows), agentgrpc the RPC's span (the caller's trace ID from the
	// metadata, a span of its own). An analyser picks a request by trace
	// ID from it; one trace may hold several requests of a process.
	Request = "latscope.request"
	// Route: inside a request's task, just before it ends, the request's
	// route when the task's name is not it. OpenTelemetry's net/http
	// handler names its span by the route only once the mux has routed the
	// request (before that: the method, "GET"), and a task's name is fixed
	// when it begins; so agentotel names the task by the span's first name
	// and logs its last one here when they differ. An analyser groups such
	// a request under this route instead of the task's name. Plain text,
	// at most MaxString bytes.
	Route = "latscope.route"
	// RPC: inside each outbound gRPC call's region (RPCRegionPrefix), the
	// traceparent sent in the call's metadata (agentgrpc).
	RPC = "latscope.rpc"
	// Span: inside the mark of an outbound call whose region cannot span
	// it (a region begun and ended at the call's start: an OpenTelemetry
	// client span may end on any goroutine, in any order with other
	// regions; a gRPC stream outlives the call that opened it), the call's
	// traceparent. Its end is a SpanEnd log with the same traceparent.
	Span = "latscope.span"
	// SpanEnd: where such a call ended, on any goroutine, in the request's
	// task: "traceparent=00-… duration_ns=N" (the format of SQLEnd;
	// FormatSpanEnd, ParseSpanEnd), the duration from the call's start.
	// The call's span runs from its mark's begin to this log (as a pgx
	// query's does from its sql region to its SQLEnd log).
	SpanEnd = "latscope.span.end"
	// Call: right after a task begins, on the goroutine that began it, with
	// the span's name as its message: the task is an outbound call's, begun
	// by agentotel for a client or producer span outside any request of
	// its own (a background job's call, or one of a request begun before
	// the trace, whose task the trace does not hold). OpenTelemetry's SDK
	// begins a task per span while the runtime traces, and without a
	// request's task around it such a span's task would be top level, like
	// a request's. An analyser excludes the task and its sub-tasks from the
	// requests.
	Call = "latscope.call"
)

// RPCRequestPrefix starts the name of a gRPC server's request, whether
// agentgrpc's interceptor began its task or the analyser inferred it from
// grpc-go's handler goroutine: the full method follows
// ("grpc /pkg.Service/Method"), so that one service's RPCs are one group
// with the agent and without it, apart from its HTTP routes.
const RPCRequestPrefix = "grpc "

// Region names of outbound calls: a kind, a space and what the call went
// to. HTTPRegionPrefix ("http HOST") and SQLRegion ("sql") are the agent's
// own; the prefixes below name the calls of agentgrpc and agentotel.
const (
	// RPCRegionPrefix starts the region of an outbound RPC; the full method
	// follows ("rpc /pkg.Service/Method").
	RPCRegionPrefix = "rpc "
	// DBRegionPrefix starts the mark of a database call that is not the
	// agent's own sql region; the database system follows ("db postgresql").
	DBRegionPrefix = "db "
	// CacheRegionPrefix starts the mark of a cache call; the system follows
	// ("cache redis").
	CacheRegionPrefix = "cache "
	// CallRegionPrefix starts the mark of any other outbound call (an
	// OpenTelemetry client or producer span of no kind above); the span's
	// name follows.
	CallRegionPrefix = "call "
)

// Kinds of outbound call, as RegionKind returns them.
const (
	KindHTTP  = "http"
	KindRPC   = "rpc"
	KindDB    = "db"
	KindCache = "cache"
	KindCall  = "call"
)

// RegionKind returns the kind of outbound call a region's name marks:
// KindHTTP, KindRPC, KindDB (also for SQLRegion), KindCache or KindCall;
// "" for any other region.
func RegionKind(name string) string {
	if name == SQLRegion {
		return KindDB
	}
	kind, rest, ok := strings.Cut(name, " ")
	if !ok || rest == "" {
		return ""
	}
	switch kind {
	case KindHTTP, KindRPC, KindDB, KindCache, KindCall:
		return kind
	}
	return ""
}

// FormatSpanEnd formats a SpanEnd message from a traceparent's text:
// "traceparent=00-… duration_ns=N".
func FormatSpanEnd(tp string, d time.Duration) string { return FormatSQLEnd(tp, d) }

// ParseSpanEnd parses the message of a SpanEnd log.
func ParseSpanEnd(msg string) (SQLEndMsg, error) { return ParseSQLEnd(msg) }

// AppendTraceParent appends tp's version-00 text ("00-<32 hex>-<16
// hex>-<2 hex>", as String formats it) to b without allocating beyond b's
// growth: for the logs written once per request.
func AppendTraceParent(b []byte, tp TraceParent) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '0', '0', '-')
	for _, c := range tp.TraceID {
		b = append(b, hexDigits[c>>4], hexDigits[c&15])
	}
	b = append(b, '-')
	for _, c := range tp.SpanID {
		b = append(b, hexDigits[c>>4], hexDigits[c&15])
	}
	return append(b, '-', hexDigits[tp.Flags>>4], hexDigits[tp.Flags&15])
}
