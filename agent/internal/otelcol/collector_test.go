package otelcol

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/latscope/latscope/agent/agentotel"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/tier"
)

// receiver starts the collector's OTLP receiver (gRPC only) on a free
// loopback port, its spans into sink, and returns its address.
func receiver(t *testing.T, sink *consumertest.TracesSink) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = addr
	cfg.Protocols.HTTP = configoptional.None[otlpreceiver.HTTPConfig]()
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return addr
}

// span is a server span as the collector received it.
type span struct {
	traceID, name string
	start, end    time.Time
}

// serverSpans lists the server spans in the traces the sink took.
func serverSpans(sink *consumertest.TracesSink) []span {
	var out []span
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					if s.Kind() != ptrace.SpanKindServer {
						continue
					}
					out = append(out, span{s.TraceID().String(), s.Name(), s.StartTimestamp().AsTime(), s.EndTimestamp().AsTime()})
				}
			}
		}
	}
	return out
}

// TestCollectorTraceID: a service as teams write it (otelhttp's handler
// around a ServeMux, the SDK batching spans to an OTLP/gRPC exporter, and
// latscope's one line, agentotel.Wrap) exports to a collector's OTLP
// receiver on loopback. A user takes the slowest server span the collector
// holds within the trace's window, as they would from Jaeger or Tempo, and
// `latscope analyze --trace-id` finds that one request: its route is the
// span's name and its latency the span's duration, within 1 ms. Without
// it, each route's requests are the server spans the collector took in
// the window, but for those at its edges.
// edgeMargin is how far apart the trace's clock snapshot and a span's own
// clock reads may put one instant: a wall clock and a monotonic clock read
// at two moments by two goroutines, either of which a busy host may hold
// off a CPU for a few milliseconds.
const edgeMargin = 5 * time.Millisecond

func TestCollectorTraceID(t *testing.T) {
	tier.Busy(t)
	sink := new(consumertest.TracesSink)
	addr := receiver(t, sink)
	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer sdk.Shutdown(ctx)
	tp := agentotel.Wrap(sdk) // the one line

	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		fmt.Fprintln(w, "item")
	})
	var n sync.Mutex
	slow := 0
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, r *http.Request) {
		n.Lock()
		slow++
		d := 5 * time.Millisecond
		if slow%4 == 0 {
			d = 25 * time.Millisecond // now and then a slow one
		}
		n.Unlock()
		time.Sleep(d)
		fmt.Fprintln(w, "report")
	})
	srv := httptest.NewServer(otelhttp.NewHandler(mux, "server", otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(propagation.TraceContext{})))
	defer srv.Close()

	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for c := range 3 {
		wg.Go(func() {
			for i := 0; cctx.Err() == nil; i++ {
				path := fmt.Sprintf("/items/%d", i)
				if (i+c)%3 == 0 {
					path = "/report"
				}
				req, _ := http.NewRequestWithContext(cctx, "GET", srv.URL+path, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					if cctx.Err() == nil {
						t.Errorf("%s: %v", path, err)
					}
					return
				}
				resp.Body.Close()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	path := agenttest.TraceWindow(t, "collector.trace", time.Second)
	cancel()
	wg.Wait()
	if err := sdk.ForceFlush(ctx); err != nil {
		t.Fatalf("exporting to the collector's receiver at %s: %v", addr, err)
	}

	res, err := fixture.AnalyzeFile(path, budget.DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	from := res.Info.StartWall
	if from.IsZero() {
		t.Fatal("the trace has no clock snapshot")
	}
	to := from.Add(time.Duration(res.Info.Duration()))
	spans := serverSpans(sink)
	var slowest span
	inWindow := 0
	for _, s := range spans {
		// a margin for the wall clocks, matched through the trace's
		// clock snapshot, not exactly
		if s.start.Before(from.Add(edgeMargin)) || s.end.After(to.Add(-edgeMargin)) {
			continue
		}
		inWindow++
		if s.end.Sub(s.start) > slowest.end.Sub(slowest.start) {
			slowest = s
		}
	}
	t.Logf("the collector's receiver took %d server spans, %d inside the trace's window; the slowest: %s %s, %v", len(spans), inWindow, slowest.name, slowest.traceID, slowest.end.Sub(slowest.start))
	if inWindow == 0 {
		t.Fatal("no server span inside the trace's window")
	}

	// Per-route budgets from the one line: each route's requests are the
	// server spans the collector took inside the window. The window's
	// edges are wall-clock times read through the trace's clock snapshot
	// and the spans' own clock reads, not the trace's events: a span that
	// begins or ends within edgeMargin of an edge may fall on either side
	// of it, so the counts may differ by at most the number of such spans
	// (at most one per client at each edge), and by no more.
	byRoute, edge := map[string]int{}, map[string]int{}
	near := func(a, b time.Time) bool { return a.Sub(b).Abs() <= edgeMargin }
	for _, s := range spans {
		if !s.start.Before(from) && !s.end.After(to) {
			byRoute[s.name]++
		}
		if near(s.start, from) || near(s.end, from) || near(s.start, to) || near(s.end, to) {
			edge[s.name]++
		}
	}
	for route, want := range byRoute {
		got := 0
		for _, g := range res.Groups {
			if g.Name == route {
				got = g.Count
			}
		}
		t.Logf("%s: %d requests in the trace, %d server spans in its window, %d within %v of an edge", route, got, want, edge[route], edgeMargin)
		if d := got - want; d > edge[route] || -d > edge[route] {
			t.Errorf("%s: %d requests in the trace, the collector took %d server spans in its window (want a difference of at most the %d spans within %v of an edge)", route, got, want, edge[route], edgeMargin)
		}
	}

	opts := budget.DefaultOptions
	opts.TraceID = slowest.traceID // as `latscope analyze --trace-id` passes it
	one, err := fixture.AnalyzeFile(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, g := range one.Groups {
		count += g.Count
		if g.Count == 0 {
			continue
		}
		if g.Name != slowest.name {
			t.Errorf("--trace-id %s: route %q, the span's name %q", slowest.traceID, g.Name, slowest.name)
		}
		want := float64(slowest.end.Sub(slowest.start)) / 1e6
		if got := g.Latency.Mean / 1e6; math.Abs(got-want) > 1 {
			t.Errorf("--trace-id %s: latency %.3f ms, the span's duration %.3f ms (want within 1 ms)", slowest.traceID, got, want)
		} else {
			t.Logf("--trace-id %s: %s, %.3f ms; the span %.3f ms", slowest.traceID, g.Name, got, want)
		}
	}
	if count != 1 {
		t.Errorf("--trace-id %s: %d requests, want 1", slowest.traceID, count)
	}
}
