package agent

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// traceParentHeader is the W3C Trace Context header.
const traceParentHeader = "traceparent"

// Handler wraps next so that each request is a runtime/trace task named by
// its route and carries a traceparent (TraceParent) for outbound calls and
// queries; with the recorder on, a slow request triggers a snapshot after
// it ends.
//
// The route is Options.Route(r) when set; else, when next is a
// *http.ServeMux, the pattern the mux chooses, even when an outer mux set
// r.Pattern (the innermost pattern wins; for a pattern without wildcards
// Handler then serves the chosen handler itself, so that the mux is
// searched once); else r.Pattern when Handler wraps one route of a
// ServeMux (mux.Handle("GET /x", a.Handler(h))); else "http". Requests no
// pattern matches are NoRoute. For chi, gin, echo and gorilla/mux, use the
// middleware of agent/agentchi, agent/agentgin, agent/agentecho or
// agent/agentmux inside the router instead (Begin).
func (a *Agent) Handler(next http.Handler) http.Handler {
	mux, _ := next.(*http.ServeMux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.serve(w, r, next, mux)
	})
}

func (a *Agent) serve(w http.ResponseWriter, r *http.Request, next http.Handler, mux *http.ServeMux) {
	if ownEndpoint(r) { // pprof's and the agent's own: not the service's requests
		next.ServeHTTP(w, r)
		return
	}
	var h http.Handler // the mux's choice, when the agent looked it up
	var route, pattern string
	switch {
	case a.opts.Route != nil:
		route = a.opts.Route(r)
	case mux != nil: // the innermost pattern wins over r.Pattern, which an outer mux set
		h, pattern = mux.Handler(r)
		route = cmp.Or(pattern, NoRoute)
	case r.Pattern != "":
		route = r.Pattern
	default:
		route = "http"
	}
	q := a.begin(r, route)
	defer q.End()
	r = r.WithContext(&q.c)
	if h == nil || !serveRouted(w, r, h, pattern) {
		next.ServeHTTP(w, r)
	}
}

// ownEndpoint reports whether r is for net/http/pprof's or the agent's own
// endpoints, wherever the service mounts them (/debug/pprof/…,
// /admin/debug/pprof/…, /debug/latscope/…), or is one of `latscope
// capture`'s (tracelog.CaptureUserAgent: its /metrics reads, which a
// trace may hold when one ended just before the trace began): a capture's
// 5 s profile and trace are not the service's requests, and must neither
// count in its latency, tasks and metrics nor set off the slow-request
// recorder.
func ownEndpoint(r *http.Request) bool {
	p := r.URL.Path
	return strings.Contains(p, "/debug/pprof/") || strings.HasSuffix(p, "/debug/pprof") || strings.Contains(p, EndpointsPrefix) ||
		strings.HasPrefix(r.Header.Get("User-Agent"), tracelog.CaptureUserAgent)
}

// NoRoute is the route of a request that no pattern of the router matched.
const NoRoute = "(no route)"

// Request is one request the agent serves: its task, its traceparent, its
// metrics. Handler makes one per request; a router's middleware makes one
// with Begin, once the router has matched the request's route. A nil
// *Request is valid: its End does nothing.
type Request struct {
	c reqCtx
}

// Begin starts the agent's work on a request that a router has matched to
// route (RouteName makes a route of a method and a pattern): the
// request's runtime/trace task, named route (subject to Options.MaxRoutes
// and the length bound), its traceparent and, with Options.Metrics, its
// metrics. It returns the request to pass on, whose context carries the
// task and the traceparent, and the *Request whose End the middleware must
// call when the rest of the chain returns (defer q.End()).
//
// Begin is the hook of the router adapters (agent/agentchi, agent/agentgin,
// agent/agentecho, agent/agentmux): a runtime/trace task's name is fixed
// when it starts, and a router knows the route only after matching, so the
// task starts inside the router, in its middleware. An empty route is
// NoRoute. When r's context already carries an agent's request (Handler
// wraps the router too, or a second middleware), Begin returns r and a nil
// *Request: the request keeps its first task, so that it is counted once.
func (a *Agent) Begin(r *http.Request, route string) (*http.Request, *Request) {
	if _, ok := r.Context().Value(reqKey{}).(*reqCtx); ok || ownEndpoint(r) {
		return r, nil
	}
	q := a.begin(r, cmp.Or(route, NoRoute))
	return r.WithContext(&q.c), q
}

// BeginContext starts the agent's work on a request that is not an HTTP
// request — an RPC of a framework without an adapter, a job taken from a
// queue, a message — as Begin does for a routed HTTP request: its
// runtime/trace task named route (NoRoute when empty; subject to
// Options.MaxRoutes and the length bound), its traceparent and, with
// Options.Metrics, its metrics and the slow-request snapshot. traceparent
// is the caller's W3C traceparent ("00-<trace>-<span>-<flags>", as a
// message's or an RPC's metadata carries it): the request is a child span
// of it; "" or an invalid one starts a new trace. It returns the request's
// context, which carries the task and the traceparent, and the *Request to
// End when the work is done (defer q.End()). When ctx already carries an
// agent's request, it returns ctx and a nil *Request: the work stays part
// of that request, counted once.
func (a *Agent) BeginContext(ctx context.Context, route, traceparent string) (context.Context, *Request) {
	if _, ok := ctx.Value(reqKey{}).(*reqCtx); ok {
		return ctx, nil
	}
	q := a.beginContext(ctx, cmp.Or(route, NoRoute), traceparent)
	return &q.c, q
}

// begin starts a request of route: its task, its traceparent, its metrics
// and its clock.
func (a *Agent) begin(r *http.Request, route string) *Request {
	return a.beginContext(r.Context(), route, firstValue(r.Header[canonicalTraceParent]))
}

// beginContext is begin for a context and the caller's traceparent.
func (a *Agent) beginContext(parent context.Context, route, traceparent string) *Request {
	if len(route) > tracelog.MaxString { // a Route hook that returns paths
		route = tracelog.Bound(route, tracelog.MaxString)
	}
	route = a.routes.admit(route)
	tctx, task := trace.NewTask(parent, route)
	q := &Request{c: reqCtx{Context: tctx, ri: span.Info{Other: a.opts.SpanContext}, a: a, task: task, route: route}}
	ctx := &q.c
	if a.met != nil {
		ctx.rm = a.met.route(route)
		ctx.ri.Route = ctx.rm
	}
	if tp, ok := a.otherSpan(parent); ok {
		ctx.ri.TP = tp
	} else {
		ctx.ri.TP = span.Request(traceparent)
	}
	if trace.IsEnabled() {
		// the request's traceparent in its task: `latscope analyze
		// --trace-id` finds the request by its trace ID
		var buf [64]byte
		trace.Log(tctx, tracelog.Request, string(tracelog.AppendTraceParent(buf[:0], ctx.ri.TP)))
	}
	ctx.start = time.Now()
	return q
}

// End ends the request: its task ends, its metrics are observed, and a slow
// request triggers a snapshot. Call it once, when the handler has returned.
func (q *Request) End() {
	if q == nil {
		return
	}
	q.c.a.finish(&q.c)
}

// Route returns the request's route: the name of its task and its metrics'
// route label ("" for a nil *Request).
func (q *Request) Route() string {
	if q == nil {
		return ""
	}
	return q.c.route
}

// canonicalTraceParent is traceParentHeader in http.Header's canonical form
// (indexing the map directly spares Get's canonicalisation).
const canonicalTraceParent = "Traceparent"

func firstValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// reqCtx is a request's context with its reqInfo: one allocation instead
// of context.WithValue's two.
type reqCtx struct {
	context.Context
	ri    span.Info
	a     *Agent
	task  *trace.Task
	route string
	start time.Time
	rm    RouteMetrics // nil without metrics
}

// reqKey is the context key of a request's *reqCtx (Begin's check for a
// request already begun).
type reqKey struct{}

// Value implements context.Context.
func (c *reqCtx) Value(key any) any {
	switch key {
	case span.Key{}:
		return &c.ri
	case reqKey{}:
		return c
	}
	return c.Context.Value(key)
}

// otherSpan asks Options.SpanContext for the request's span.
func (a *Agent) otherSpan(ctx context.Context) (tp tracelog.TraceParent, ok bool) {
	if a.opts.SpanContext == nil {
		return tracelog.TraceParent{}, false
	}
	tp, ok = a.opts.SpanContext(ctx)
	return tp, ok && tp.IsValid()
}

// finish ends a request's task, observes it in its route's metrics, and
// snapshots it if it was slow.
func (a *Agent) finish(ctx *reqCtx) {
	d := time.Since(ctx.start)
	ri, route, task := &ctx.ri, ctx.route, ctx.task
	if ctx.rm != nil {
		observe(ctx.rm, d, ri)
	}
	slow, cut := false, time.Duration(0)
	if a.rec != nil {
		slow, cut = a.slow.observe(route, d)
	}
	if slow {
		trace.Log(ctx, tracelog.Slow, slowText(route, d, cut, ri.TP.String()))
	}
	task.End()
	if slow {
		a.rec.trigger(fmt.Sprintf("slow-%dms", d.Milliseconds()))
	}
}

// slowText is the message of a tracelog.Slow log. It is at most
// tracelog.MaxString bytes: a long route is cut (tracelog.Bound) so that
// its quoted form leaves room for the numbers and the traceparent.
func slowText(route string, d, cut time.Duration, tp string) string {
	rest := " latency_ns=" + strconv.FormatInt(int64(d), 10) +
		" threshold_ns=" + strconv.FormatInt(int64(cut), 10) + " traceparent=" + tp
	room := tracelog.MaxString - len("route=") - len(rest)
	q := strconv.Quote(route)
	for n := len(route); len(q) > room && n > 0; {
		// Quoting makes a byte at most 4 (\xff): shrink in proportion.
		n = min(n-1, n*room/len(q))
		q = strconv.Quote(tracelog.Bound(route, max(n, 0)))
	}
	return tracelog.Bound("route="+q+rest, tracelog.MaxString)
}
