package agent

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"runtime/trace"
	"strconv"
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
// The route is Options.Route(r) when set; else r.Pattern when Handler wraps
// one route of a ServeMux (mux.Handle("GET /x", a.Handler(h))); else, when
// next is a *http.ServeMux, the pattern the mux chooses (for a pattern
// without wildcards Handler then serves the chosen handler itself, so that
// the mux is searched once); else "http". Requests no pattern matches are
// "(no route)".
func (a *Agent) Handler(next http.Handler) http.Handler {
	mux, _ := next.(*http.ServeMux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.serve(w, r, next, mux)
	})
}

func (a *Agent) serve(w http.ResponseWriter, r *http.Request, next http.Handler, mux *http.ServeMux) {
	var h http.Handler // the mux's choice, when the agent looked it up
	var route, pattern string
	switch {
	case a.opts.Route != nil:
		route = a.opts.Route(r)
	case r.Pattern != "":
		route = r.Pattern
	case mux != nil:
		h, pattern = mux.Handler(r)
		route = cmp.Or(pattern, "(no route)")
	default:
		route = "http"
	}
	if len(route) > tracelog.MaxString { // a Route hook that returns paths
		route = tracelog.Bound(route, tracelog.MaxString)
	}
	route = a.routes.admit(route)
	tctx, task := trace.NewTask(r.Context(), route)
	ctx := &reqCtx{Context: tctx, ri: span.Info{Other: a.opts.SpanContext}}
	var rm *routeMetrics
	if a.met != nil {
		rm = a.met.route(route)
		ctx.ri.DBCall = rm.dbCall
	}
	if tp, ok := a.otherSpan(r.Context()); ok {
		ctx.ri.TP = tp
	} else {
		ctx.ri.TP = span.Request(firstValue(r.Header[canonicalTraceParent]))
	}
	start := time.Now()
	defer a.finish(ctx, task, route, start, rm)
	r = r.WithContext(ctx)
	if h == nil || !serveRouted(w, r, h, pattern) {
		next.ServeHTTP(w, r)
	}
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
	ri span.Info
}

// Value implements context.Context.
func (c *reqCtx) Value(key any) any {
	if key == (span.Key{}) {
		return &c.ri
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

// finish ends a request's task, observes it in rm (nil without metrics),
// and snapshots it if it was slow.
func (a *Agent) finish(ctx *reqCtx, task *trace.Task, route string, start time.Time, rm *routeMetrics) {
	d := time.Since(start)
	ri := &ctx.ri
	if rm != nil {
		rm.observe(d, ri)
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
