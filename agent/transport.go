package agent

import (
	"net/http"
	"runtime/trace"
	"time"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// Transport returns base (http.DefaultTransport when nil) wrapped so that
// each outbound call runs in a region named tracelog.HTTPRegionPrefix+host
// (cut to tracelog.MaxString bytes with tracelog.Bound), from the
// call until the response headers arrive (reading the body is outside it),
// and carries a traceparent header, which is also logged in the region
// under tracelog.HTTP. A valid traceparent the request already has (set
// by an OpenTelemetry transport, say) is kept and logged; otherwise the
// call gets one from callSpan: Options.SpanContext's span, else a new span
// in the request's trace. The caller's request is never modified. With
// Options.Metrics, a call under a Handler's request is timed over the same
// interval and added to the request's latscope_request_outbound_seconds.
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
	defer trace.StartRegion(ctx, tracelog.HTTPRegionPrefix+tracelog.Bound(req.URL.Host, tracelog.MaxString-len(tracelog.HTTPRegionPrefix))).End()
	tp, err := tracelog.ParseTraceParent(req.Header.Get(traceParentHeader))
	if err != nil {
		tp = span.Call(ctx)
		r := *req // shallow copy: RoundTrippers must not modify the request
		r.Header = req.Header.Clone()
		if r.Header == nil {
			r.Header = http.Header{}
		}
		r.Header.Set(traceParentHeader, tp.String())
		req = &r
	}
	trace.Log(ctx, tracelog.HTTP, tp.String())
	ri := span.Of(ctx)
	if !ri.Metered() {
		return t.base.RoundTrip(req)
	}
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	ri.AddOutbound(time.Since(start))
	return resp, err
}

// Unwrap returns the wrapped transport.
func (t *transport) Unwrap() http.RoundTripper { return t.base }
