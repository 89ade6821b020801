package agent

import (
	"net/http"
	"runtime/trace"

	"github.com/latscope/latscope/pglog"
)

// Transport returns base (http.DefaultTransport when nil) wrapped so that
// each outbound call runs in a region named HTTPRegionPrefix+host, from the
// call until the response headers arrive (reading the body is outside it),
// and carries a traceparent header, which is also logged in the region
// under HTTPLogCategory. A valid traceparent the request already has (set
// by an OpenTelemetry transport, say) is kept and logged; otherwise the
// call gets one from callSpan: Options.SpanContext's span, else a new span
// in the request's trace. The caller's request is never modified.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	defer trace.StartRegion(ctx, HTTPRegionPrefix+req.URL.Host).End()
	tp, err := pglog.ParseTraceParent(req.Header.Get(traceParentHeader))
	if err != nil {
		tp = callSpan(ctx)
		r := *req // shallow copy: RoundTrippers must not modify the request
		r.Header = req.Header.Clone()
		if r.Header == nil {
			r.Header = http.Header{}
		}
		r.Header.Set(traceParentHeader, tp.String())
		req = &r
	}
	trace.Log(ctx, HTTPLogCategory, tp.String())
	return t.base.RoundTrip(req)
}

// Unwrap returns the wrapped transport.
func (t *transport) Unwrap() http.RoundTripper { return t.base }
