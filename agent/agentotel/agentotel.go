// Package agentotel bridges OpenTelemetry to latscope: it wraps the
// TracerProvider a service already has, so that the spans its
// instrumentation makes (otelhttp, otelgrpc, otelsql, redisotel, …) become
// what latscope's analysis reads from an execution trace. One line at
// start-up:
//
//	otel.SetTracerProvider(agentotel.Wrap(tp)) // was: otel.SetTracerProvider(tp)
//
// (or pass agentotel.Wrap(tp) wherever an instrumentation takes a provider).
//
// What goes into the runtime/trace execution trace while one is taken (the
// names are package tracelog's; docs/agent.md, "OpenTelemetry"):
//
//   - a local root server span (a server span without a parent in this
//     process) is a request: a task named by the span's name when it starts,
//     begun in the span's parent context on the goroutine that starts it
//     (for otelhttp, the request's), ended when the span ends; a
//     tracelog.Request log with the span's trace and span IDs at its start,
//     and a tracelog.Route log with the span's last name before its end when
//     the span was renamed (otelhttp names a span by the route only after
//     the mux has routed the request: "GET" at the start, "GET
//     /users/{id}" at the end). Sampled or not: a span the sampler drops
//     still has IDs and a name, and its request is marked all the same;
//   - a client or producer span under such a request, on any goroutine, is
//     a call: a mark region named by its kind (tracelog.RegionKind: "http
//     HOST", "rpc /pkg.Service/Method", "db SYSTEM", "cache SYSTEM", "call
//     NAME", from the span's semantic-convention attributes) begun and ended
//     where the span starts (or, when its attributes at the start do not say
//     its kind, where they are first set: otelhttp's transport sets them
//     just after it starts the span), with a tracelog.Span log of its
//     traceparent inside; and a tracelog.SpanEnd log of the same traceparent
//     and the span's duration where it ends, on whichever goroutine ends it,
//     in the request's task. A span may end on any goroutine and in any order
//     with other regions, which a region held open across it would break
//     (the trace parser rejects a region ended out of order), so a call is a
//     mark and an end log, as a pgx query is.
//
// OpenTelemetry's SDK makes a runtime/trace task of its own for every span
// it records, named by the span's first name, when a trace is being taken.
// The request's task begins before the SDK's, so the SDK's is a task inside
// it, counted with the request (docs/method.md §2); without the wrapper each
// recorded local root span would be a request named by its first name (all
// of otelhttp's "GET"), and a job's own root span a request too.
//
// The package needs neither latscope's agent nor the SDK: any execution
// trace taken while it runs holds the tasks (the agent's flight recorder, or
// `latscope capture` against net/http/pprof).
package agentotel

import (
	"context"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/latscope/latscope/tracelog"
)

// Options configures Wrap.
type Options struct {
	// MaxRoutes caps the distinct task names (and routes logged): once
	// that many were seen, a request of any other name is named OtherRoute.
	// Span names should be low-cardinality; this bounds the harm of one
	// that is not. Default 1000.
	MaxRoutes int
}

// OtherRoute names the requests beyond Options.MaxRoutes, as the agent
// does (agent.OtherRoute).
const OtherRoute = "(other)"

// Wrap returns tp with requests and calls marked in the execution trace
// (see the package comment), with the default Options.
func Wrap(tp oteltrace.TracerProvider) oteltrace.TracerProvider {
	return WrapWithOptions(tp, Options{})
}

// WrapWithOptions is Wrap with opts (zero fields take their defaults).
func WrapWithOptions(tp oteltrace.TracerProvider, opts Options) oteltrace.TracerProvider {
	if opts.MaxRoutes <= 0 {
		opts.MaxRoutes = 1000
	}
	return &provider{TracerProvider: tp, st: &state{opts: opts}}
}

// state is what a wrapped provider's tracers share.
type state struct {
	opts   Options
	routes sync.Map // name → struct{}
	nroute atomic.Int64
}

type provider struct {
	oteltrace.TracerProvider
	st *state
}

// Tracer implements oteltrace.TracerProvider.
func (p *provider) Tracer(name string, opts ...oteltrace.TracerOption) oteltrace.Tracer {
	return &tracer{Tracer: p.TracerProvider.Tracer(name, opts...), st: p.st}
}

type tracer struct {
	oteltrace.Tracer
	st *state
}

// reqKey is the context key of the request a span is under.
type reqKey struct{}

// request is one request's task.
type request struct {
	ctx  context.Context // the task's
	task *trace.Task
	name string // the task's name
}

// Start implements oteltrace.Tracer.
func (t *tracer) Start(ctx context.Context, name string, opts ...oteltrace.SpanStartOption) (context.Context, oteltrace.Span) {
	if !trace.IsEnabled() {
		return t.Tracer.Start(ctx, name, opts...)
	}
	cfg := oteltrace.NewSpanStartConfig(opts...)
	switch cfg.SpanKind() {
	case oteltrace.SpanKindServer:
		if psc := oteltrace.SpanContextFromContext(ctx); cfg.NewRoot() || !psc.IsValid() || psc.IsRemote() {
			return t.startRequest(ctx, name, opts)
		}
	case oteltrace.SpanKindClient, oteltrace.SpanKindProducer:
		if req, ok := ctx.Value(reqKey{}).(*request); ok {
			return t.startCall(ctx, req, name, cfg.Attributes(), opts)
		}
		return t.startLoneCall(ctx, name, opts)
	}
	return t.Tracer.Start(ctx, name, opts...)
}

// startLoneCall starts a call's span outside any request: in a task of its
// own, marked tracelog.Call, which the SDK's task for the span nests in,
// so that an analyser does not take it for a request (tracelog.Call).
func (t *tracer) startLoneCall(ctx context.Context, name string, opts []oteltrace.SpanStartOption) (context.Context, oteltrace.Span) {
	tctx, task := trace.NewTask(ctx, tracelog.Bound(name, tracelog.MaxString))
	trace.Log(tctx, tracelog.Call, tracelog.Bound(name, tracelog.MaxString))
	ctx, s := t.Tracer.Start(tctx, name, opts...)
	w := &loneSpan{Span: s, task: task}
	return oteltrace.ContextWithSpan(ctx, w), w
}

// loneSpan is a call's span outside any request: its End ends the span,
// then the task it runs in.
type loneSpan struct {
	oteltrace.Span
	task  *trace.Task
	ended atomic.Bool
}

// End implements oteltrace.Span.
func (w *loneSpan) End(opts ...oteltrace.SpanEndOption) {
	w.Span.End(opts...)
	if !w.ended.Swap(true) {
		w.task.End()
	}
}

// startRequest begins a request's task, then its span inside it.
func (t *tracer) startRequest(ctx context.Context, name string, opts []oteltrace.SpanStartOption) (context.Context, oteltrace.Span) {
	route := t.st.admit(name)
	tctx, task := trace.NewTask(ctx, route)
	req := &request{ctx: tctx, task: task, name: route}
	ctx, s := t.Tracer.Start(tctx, name, opts...)
	var buf [64]byte
	trace.Log(tctx, tracelog.Request, string(tracelog.AppendTraceParent(buf[:0], traceParent(s.SpanContext()))))
	w := &serverSpan{Span: s, req: req, st: t.st}
	return oteltrace.ContextWithSpan(context.WithValue(ctx, reqKey{}, req), w), w
}

// serverSpan is a request's span: its End ends the request's task.
type serverSpan struct {
	oteltrace.Span
	req   *request
	st    *state
	mu    sync.Mutex
	name  string // the last SetName's, "" when none
	ended atomic.Bool
}

// SetName implements oteltrace.Span.
func (w *serverSpan) SetName(name string) {
	w.Span.SetName(name)
	w.mu.Lock()
	w.name = name
	w.mu.Unlock()
}

// End implements oteltrace.Span: the span ends, then the request's task
// (after a Route log when the span was renamed).
func (w *serverSpan) End(opts ...oteltrace.SpanEndOption) {
	w.Span.End(opts...)
	if w.ended.Swap(true) {
		return
	}
	w.mu.Lock()
	name := w.name
	w.mu.Unlock()
	if name != "" && name != w.req.name {
		if route := w.st.admit(name); route != w.req.name {
			trace.Log(w.req.ctx, tracelog.Route, route)
		}
	}
	w.req.task.End()
}

// startCall starts a call's span and marks it: where it starts when its
// attributes there say its kind, else where its attributes are first set
// (otelhttp's transport sets them right after it starts the span, on the
// same goroutine), else where it ends.
func (t *tracer) startCall(ctx context.Context, req *request, name string, attrs []attribute.KeyValue, opts []oteltrace.SpanStartOption) (context.Context, oteltrace.Span) {
	// The span's start and end are the times this wrapper reads (unless the
	// caller gave its own), so that the duration it logs is the exported
	// span's exactly, however the goroutine is scheduled between them.
	startConfig := oteltrace.NewSpanStartConfig(opts...)
	start := startConfig.Timestamp()
	if start.IsZero() {
		start = time.Now()
		opts = append(opts[:len(opts):len(opts)], oteltrace.WithTimestamp(start))
	}
	ctx, s := t.Tracer.Start(ctx, name, opts...)
	var buf [64]byte
	w := &callSpan{Span: s, req: req, ctx: ctx, name: name, tp: string(tracelog.AppendTraceParent(buf[:0], traceParent(s.SpanContext()))), start: start}
	if call := callName(name, attrs); tracelog.RegionKind(call) != tracelog.KindCall {
		w.mark(call)
	} else {
		w.attrs = attrs
	}
	return oteltrace.ContextWithSpan(ctx, w), w
}

// callSpan is a call's span: its End logs the call's end.
type callSpan struct {
	oteltrace.Span
	req    *request
	ctx    context.Context // the span's, for its mark
	name   string
	tp     string
	start  time.Time
	mu     sync.Mutex
	attrs  []attribute.KeyValue // the start's, until marked
	marked bool
	ended  atomic.Bool
}

// mark writes the call's mark region, named call, once.
func (w *callSpan) mark(call string) {
	w.marked = true
	w.attrs = nil
	r := trace.StartRegion(w.ctx, call)
	trace.Log(w.ctx, tracelog.Span, w.tp)
	r.End()
}

// SetAttributes implements oteltrace.Span: the first call marks a span not
// marked yet, named by its attributes so far.
func (w *callSpan) SetAttributes(kv ...attribute.KeyValue) {
	w.Span.SetAttributes(kv...)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.marked {
		w.mark(callName(w.name, append(w.attrs[:len(w.attrs):len(w.attrs)], kv...)))
	}
}

// End implements oteltrace.Span.
func (w *callSpan) End(opts ...oteltrace.SpanEndOption) {
	endConfig := oteltrace.NewSpanEndConfig(opts...)
	end := endConfig.Timestamp()
	if end.IsZero() {
		end = time.Now()
		opts = append(opts[:len(opts):len(opts)], oteltrace.WithTimestamp(end))
	}
	d := end.Sub(w.start)
	w.Span.End(opts...)
	if w.ended.Swap(true) || !trace.IsEnabled() {
		return
	}
	w.mu.Lock()
	if !w.marked {
		w.mark(callName(w.name, w.attrs))
	}
	w.mu.Unlock()
	trace.Log(w.req.ctx, tracelog.SpanEnd, tracelog.FormatSpanEnd(w.tp, d))
}

// admit returns name, bounded to tracelog.MaxString bytes, or OtherRoute
// when Options.MaxRoutes other names were admitted first.
func (st *state) admit(name string) string {
	name = tracelog.Bound(name, tracelog.MaxString)
	if _, ok := st.routes.Load(name); ok {
		return name
	}
	if st.nroute.Add(1) > int64(st.opts.MaxRoutes) {
		st.nroute.Add(-1)
		return OtherRoute
	}
	if _, loaded := st.routes.LoadOrStore(name, struct{}{}); loaded {
		st.nroute.Add(-1)
	}
	return name
}

// traceParent is a span context as a traceparent.
func traceParent(sc oteltrace.SpanContext) tracelog.TraceParent {
	return tracelog.TraceParent{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Flags: byte(sc.TraceFlags())}
}

// cacheSystems are the db.system values of caches.
var cacheSystems = map[string]bool{
	"redis": true, "valkey": true, "memcached": true, "hazelcast": true,
	"geode": true, "ignite": true, "coherence": true,
}

// callName names a call's mark by its kind, from the span's semantic
// convention attributes (older and current names alike):
//
//   - rpc.system set: "rpc /SERVICE/METHOD" (rpc.service and rpc.method, or
//     a fully qualified rpc.method, else the span's name);
//   - db.system.name or db.system set: "cache SYSTEM" for a cache (redis,
//     valkey, memcached, …), else "db SYSTEM";
//   - an HTTP method (http.request.method, http.method): "http HOST", the
//     host as the agent's Transport names it (server.address and
//     server.port, net.peer.name and net.peer.port, or url.full's host);
//   - otherwise "call " and the span's name.
func callName(spanName string, attrs []attribute.KeyValue) string {
	var rpcSystem, rpcService, rpcMethod, dbSystem, httpMethod, host, port, url string
	for _, kv := range attrs {
		switch kv.Key {
		case "rpc.system":
			rpcSystem = str(kv)
		case "rpc.service":
			rpcService = str(kv)
		case "rpc.method":
			rpcMethod = str(kv)
		case "db.system.name":
			dbSystem = str(kv)
		case "db.system":
			if dbSystem == "" {
				dbSystem = str(kv)
			}
		case "http.request.method", "http.method":
			httpMethod = str(kv)
		case "server.address":
			host = str(kv)
		case "net.peer.name":
			if host == "" {
				host = str(kv)
			}
		case "server.port", "net.peer.port":
			if port == "" {
				port = str(kv)
			}
		case "url.full", "http.url":
			url = str(kv)
		}
	}
	var name string
	switch {
	case rpcSystem != "":
		switch {
		case strings.Contains(strings.TrimPrefix(rpcMethod, "/"), "/"):
			name = "/" + strings.TrimPrefix(rpcMethod, "/")
		case rpcService != "" && rpcMethod != "":
			name = "/" + rpcService + "/" + rpcMethod
		default:
			name = "/" + strings.TrimPrefix(spanName, "/")
		}
		return bounded(tracelog.RPCRegionPrefix, name)
	case dbSystem != "":
		if cacheSystems[dbSystem] {
			return bounded(tracelog.CacheRegionPrefix, dbSystem)
		}
		return bounded(tracelog.DBRegionPrefix, dbSystem)
	case httpMethod != "":
		switch {
		case host != "" && port != "":
			host += ":" + port
		case host == "" && url != "":
			host = urlHost(url)
		}
		if host == "" {
			host = spanName
		}
		return bounded(tracelog.HTTPRegionPrefix, host)
	}
	return bounded(tracelog.CallRegionPrefix, spanName)
}

// bounded is prefix+rest within tracelog.MaxString bytes.
func bounded(prefix, rest string) string {
	return prefix + tracelog.Bound(rest, tracelog.MaxString-len(prefix))
}

// str is an attribute's value as a string (an integer port as digits).
func str(kv attribute.KeyValue) string {
	if kv.Value.Type() == attribute.INT64 {
		return strconv.FormatInt(kv.Value.AsInt64(), 10)
	}
	return kv.Value.AsString()
}

// urlHost is the host (and port) of a URL: what lies between "//" and the
// next "/", "?" or "#", without user information.
func urlHost(u string) string {
	_, rest, ok := strings.Cut(u, "//")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}
