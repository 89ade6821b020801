package agentotel

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	rtrace "runtime/trace"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
	xtrace "golang.org/x/exp/trace"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/tracelog"
)

// The OpenTelemetry SDK's own pipeline (a TracerProvider with the
// processor and an in-memory exporter), a net/http server on loopback whose
// handler makes its spans as otelhttp does (the server span from the
// incoming traceparent, named by the method at its start and renamed by
// the route before it ends), and client spans of each kind. otelhttp itself
// and an exporter to a real collector are in agent/internal/e2e, so that
// this module requires no instrumentation library.

// traced runs fn under runtime/trace, keeps the trace in *raw and returns
// its Events.
func traced(t *testing.T, raw *[]byte, fn func()) []agenttest.Event {
	t.Helper()
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	func() {
		defer rtrace.Stop()
		fn()
	}()
	*raw = buf.Bytes()
	return agenttest.Events(t, t.Name(), bytes.NewReader(*raw))
}

// taskTree is a trace's tasks: names, parents, and those in no other.
type taskTree struct {
	name   map[uint64]string
	parent map[uint64]uint64
	roots  []uint64
}

// root returns the task in no other that task is inside of (or is).
func (tt taskTree) root(task uint64) uint64 {
	for {
		p, ok := tt.parent[task]
		if !ok || p == 0 {
			return task
		}
		task = p
	}
}

// topTasks reads the tasks of a trace with their parents.
func topTasks(t *testing.T, raw []byte) taskTree {
	t.Helper()
	tt := taskTree{name: map[uint64]string{}, parent: map[uint64]uint64{}}
	r, err := xtrace.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return tt
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() != xtrace.EventTaskBegin {
			continue
		}
		task := ev.Task()
		id, parent := uint64(task.ID), uint64(task.Parent)
		if task.Parent == xtrace.NoTask {
			parent = 0
		}
		tt.name[id], tt.parent[id] = task.Type, parent
		if parent == 0 {
			tt.roots = append(tt.roots, id)
		}
	}
}

// otelServer serves "GET /users/{id}" and "GET /orders" with tp's spans.
// Each request makes a database and a cache call, and /users also an
// outbound RPC and an HTTP call, each a client span; the HTTP call's span
// ends on another goroutine after the server span has ended, as a client
// span ended by a response body closed elsewhere does.
func otelServer(tp oteltrace.TracerProvider, late *sync.WaitGroup) http.Handler {
	tracer := tp.Tracer("latscope.test")
	prop := propagation.TraceContext{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		call(ctx, tracer, "SELECT users", attribute.String("db.system.name", "postgresql"))
		call(ctx, tracer, "GET", attribute.String("db.system", "redis"))
		call(ctx, tracer, "latscope.test.Items/Get", attribute.String("rpc.system", "grpc"),
			attribute.String("rpc.service", "latscope.test.Items"), attribute.String("rpc.method", "Get"))
		_, span := tracer.Start(ctx, "GET", oteltrace.WithSpanKind(oteltrace.SpanKindClient), oteltrace.WithAttributes(
			attribute.String("http.request.method", "GET"), attribute.String("server.address", "upstream"), attribute.Int("server.port", 8080)))
		late.Add(1)
		go func() {
			defer late.Done()
			time.Sleep(2 * time.Millisecond)
			span.End()
		}()
		io.WriteString(w, r.PathValue("id"))
	})
	mux.HandleFunc("GET /orders", func(w http.ResponseWriter, r *http.Request) {
		call(r.Context(), tracer, "SELECT orders", attribute.String("db.system", "mysql"))
		io.WriteString(w, "orders")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, r.Method, oteltrace.WithSpanKind(oteltrace.SpanKindServer))
		defer span.End()
		// An internal span between the server span and the calls.
		ctx, inner := tracer.Start(ctx, "handle")
		defer inner.End()
		r = r.WithContext(ctx)
		mux.ServeHTTP(w, r)
		if r.Pattern != "" {
			span.SetName(r.Pattern)
		}
	})
}

// call makes one client span of 1 ms with attrs.
func call(ctx context.Context, tracer oteltrace.Tracer, name string, attrs ...attribute.KeyValue) {
	_, span := tracer.Start(ctx, name, oteltrace.WithSpanKind(oteltrace.SpanKindClient), oteltrace.WithAttributes(attrs...))
	time.Sleep(time.Millisecond)
	span.End()
}

// TestWrap: every request the server answered is a task named by its
// server span's first name, with a Request log of its exported trace and
// span IDs, the caller's trace ID, and a Route log of the span's route;
// every client span a mark region of its kind with a Span log, and a
// SpanEnd log whose duration is the exported span's. The trace parses
// although a client span ended after its request, on another goroutine.
func TestWrap(t *testing.T) {
	const n = 10
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	var late sync.WaitGroup
	srv := httptest.NewServer(otelServer(Wrap(tp), &late))
	defer srv.Close()

	const caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	var raw []byte
	evs := traced(t, &raw, func() {
		for i := range n {
			agenttest.Get(t, srv.Client(), fmt.Sprintf("%s/users/%d", srv.URL, i), "traceparent", caller)
			agenttest.Get(t, srv.Client(), srv.URL+"/orders")
		}
		late.Wait()
	})
	top := topTasks(t, raw)

	spans := exp.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byID[traceParent(s.SpanContext).String()] = s
	}
	tasks := map[string]int{}
	for _, task := range top.roots {
		tasks[top.name[task]]++
	}
	if want := map[string]int{"GET": 2 * n}; !maps.Equal(tasks, want) {
		t.Errorf("requests (tasks in no other) %v, want %v", tasks, want)
	}
	if len(top.name) <= 2*n {
		t.Errorf("%d tasks in all: want the SDK's own tasks of each span too, inside the requests'", len(top.name))
	}
	routes := map[string]int{}
	reqTask := map[uint64]string{} // task → its request's route
	for _, ev := range agenttest.Logs(evs, tracelog.Route) {
		routes[ev.Message]++
		reqTask[ev.Task] = ev.Message
		if top.root(ev.Task) != ev.Task {
			t.Errorf("Route log %q in a task inside a request, want the request's own", ev.Message)
		}
	}
	if want := map[string]int{"GET /users/{id}": n, "GET /orders": n}; !maps.Equal(routes, want) {
		t.Errorf("routes logged %v, want %v", routes, want)
	}
	reqs := agenttest.Logs(evs, tracelog.Request)
	if len(reqs) != 2*n {
		t.Errorf("%d Request logs, want %d", len(reqs), 2*n)
	}
	callerTP, _ := tracelog.ParseTraceParent(caller)
	for _, ev := range reqs {
		s, ok := byID[ev.Message]
		if !ok || s.SpanKind != oteltrace.SpanKindServer || s.Name != reqTask[ev.Task] {
			t.Errorf("Request log %q in the task of %q: want an exported server span of that route (%v, %q)", ev.Message, reqTask[ev.Task], ok, s.Name)
		}
		if top.root(ev.Task) != ev.Task {
			t.Errorf("Request log %q in a task inside a request, want the request's own", ev.Message)
		}
		if reqTask[ev.Task] == "GET /users/{id}" && s.SpanContext.TraceID() != oteltrace.TraceID(callerTP.TraceID) {
			t.Errorf("request %q: want the caller's trace %x", ev.Message, callerTP.TraceID)
		}
	}

	regions := map[string]int{}
	for _, ev := range evs {
		if ev.Kind == agenttest.KindRegionBegin {
			regions[ev.Name]++
			if top.name[top.root(ev.Task)] != "GET" {
				t.Errorf("region %q outside a request's task", ev.Name)
			}
		}
	}
	wantRegions := map[string]int{"db postgresql": n, "cache redis": n, "rpc /latscope.test.Items/Get": n, "http upstream:8080": n, "db mysql": n}
	if !maps.Equal(regions, wantRegions) {
		t.Errorf("regions %v, want %v", regions, wantRegions)
	}
	marks := agenttest.Logs(evs, tracelog.Span)
	ends := agenttest.Logs(evs, tracelog.SpanEnd)
	if len(marks) != 5*n || len(ends) != 5*n {
		t.Errorf("%d Span and %d SpanEnd logs, want %d each", len(marks), len(ends), 5*n)
	}
	for _, ev := range ends {
		e, err := tracelog.ParseSpanEnd(ev.Message)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := byID[e.TraceParent.String()]
		if d := e.Duration - s.EndTime.Sub(s.StartTime); !ok || s.SpanKind != oteltrace.SpanKindClient || d != 0 { // the wrapper gives the SDK its own start and end times
			t.Errorf("SpanEnd %q: want an exported client span of that duration (%v %v)", ev.Message, ok, s.EndTime.Sub(s.StartTime))
		}
		if top.root(ev.Task) != ev.Task || top.name[ev.Task] != "GET" {
			t.Errorf("SpanEnd %q in task %q, want the request's", ev.Message, top.name[ev.Task])
		}
	}
	t.Logf("requests %v (%d tasks in all), routes %v, regions %v", tasks, len(top.name), routes, regions)
}

// TestNotARequest: spans outside a local root server span (a job's own
// spans, a server span under a local parent) get no request and no mark
// (the SDK's own tasks are its); a client span among them runs in a task
// marked tracelog.Call, the one log they get (TestLoneCall).
func TestNotARequest(t *testing.T) {
	sdk := sdktrace.NewTracerProvider()
	defer sdk.Shutdown(context.Background())
	tracer := Wrap(sdk).Tracer("latscope.test")
	evs := agenttest.Traced(t, func() {
		ctx, job := tracer.Start(context.Background(), "job")
		call(ctx, tracer, "SELECT 1", attribute.String("db.system", "postgresql"))
		_, inner := tracer.Start(ctx, "GET /inner", oteltrace.WithSpanKind(oteltrace.SpanKindServer))
		inner.End()
		job.End()
		call(context.Background(), tracer, "SELECT 2", attribute.String("db.system", "postgresql"))
	})
	calls := 0
	for _, ev := range evs {
		switch {
		case ev.Kind == agenttest.KindLog && ev.Name == tracelog.Call:
			calls++
		case ev.Kind != agenttest.KindTaskBegin && ev.Kind != agenttest.KindTaskEnd:
			t.Errorf("event %+v, want none but tasks and their Call logs", ev)
		}
	}
	if calls != 2 {
		t.Errorf("%d Call logs, want 2 (SELECT 1 and SELECT 2)", calls)
	}
}

// TestUnsampled: with a sampler that samples nothing, every request is
// still marked (its span has IDs and a name, not sampled), and its calls;
// the SDK, which records nothing, makes no task of its own.
func TestUnsampled(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	var late sync.WaitGroup
	srv := httptest.NewServer(otelServer(Wrap(tp), &late))
	defer srv.Close()
	var raw []byte
	evs := traced(t, &raw, func() {
		for range 3 {
			agenttest.Get(t, srv.Client(), srv.URL+"/orders")
		}
	})
	reqs := agenttest.Logs(evs, tracelog.Request)
	if len(reqs) != 3 || len(topTasks(t, raw).name) != 3 {
		t.Errorf("%d requests marked, %d tasks; want 3, 3", len(reqs), len(topTasks(t, raw).name))
	}
	for _, ev := range reqs {
		if tp, _ := tracelog.ParseTraceParent(ev.Message); tp.Flags != 0 || !tp.IsValid() {
			t.Errorf("request %q: want an unsampled span", ev.Message)
		}
	}
	if n := len(agenttest.Logs(evs, tracelog.SpanEnd)); n != 3 {
		t.Errorf("%d calls ended, want 3", n)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans exported, want none (never sampled)", n)
	}
}

// TestMaxRoutes: names beyond MaxRoutes are OtherRoute.
func TestMaxRoutes(t *testing.T) {
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	defer sdk.Shutdown(context.Background())
	tracer := WrapWithOptions(sdk, Options{MaxRoutes: 2}).Tracer("latscope.test")
	evs := agenttest.Traced(t, func() {
		for _, name := range []string{"a", "b", "c", "a", "d"} {
			_, s := tracer.Start(context.Background(), name, oteltrace.WithSpanKind(oteltrace.SpanKindServer))
			s.End()
		}
	})
	var got []string
	for _, ev := range evs {
		if ev.Kind == agenttest.KindTaskBegin {
			got = append(got, ev.Name)
		}
	}
	if want := []string{"a", "b", OtherRoute, "a", OtherRoute}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tasks %v, want %v", got, want)
	}
}

// TestCallName: the mark's name from each convention's attributes.
func TestCallName(t *testing.T) {
	for _, tt := range []struct {
		name  string
		attrs []attribute.KeyValue
		want  string
	}{
		{"x", []attribute.KeyValue{attribute.String("rpc.system", "grpc"), attribute.String("rpc.method", "pkg.Svc/Get")}, "rpc /pkg.Svc/Get"},
		{"pkg.Svc/Get", []attribute.KeyValue{attribute.String("rpc.system", "grpc")}, "rpc /pkg.Svc/Get"},
		{"q", []attribute.KeyValue{attribute.String("db.system", "memcached")}, "cache memcached"},
		{"q", []attribute.KeyValue{attribute.String("db.system.name", "sqlite"), attribute.String("db.system", "other")}, "db sqlite"},
		{"GET", []attribute.KeyValue{attribute.String("http.method", "GET"), attribute.String("http.url", "https://u:p@api.example:8443/v1?x=1")}, "http api.example:8443"},
		{"GET", []attribute.KeyValue{attribute.String("http.request.method", "GET"), attribute.String("net.peer.name", "up")}, "http up"},
		{"publish orders", []attribute.KeyValue{attribute.String("messaging.system", "kafka")}, "call publish orders"},
	} {
		if got := callName(tt.name, tt.attrs); got != tt.want || tracelog.RegionKind(got) == "" {
			t.Errorf("callName(%q %v) = %q (kind %q), want %q", tt.name, tt.attrs, got, tracelog.RegionKind(got), tt.want)
		}
	}
}

// TestMarkAfterStart: a client span whose attributes are set after it
// starts (as otelhttp's transport does) is marked where they are set, named
// by them; one never given any is marked "call NAME" where it ends.
func TestMarkAfterStart(t *testing.T) {
	sdk := sdktrace.NewTracerProvider()
	defer sdk.Shutdown(context.Background())
	tracer := Wrap(sdk).Tracer("latscope.test")
	evs := agenttest.Traced(t, func() {
		ctx, req := tracer.Start(context.Background(), "GET", oteltrace.WithSpanKind(oteltrace.SpanKindServer))
		_, c := tracer.Start(ctx, "HTTP GET", oteltrace.WithSpanKind(oteltrace.SpanKindClient))
		c.SetAttributes(attribute.String("http.request.method", "GET"), attribute.String("server.address", "up"), attribute.Int("server.port", 80))
		c.SetAttributes(attribute.String("db.system", "redis")) // later attributes do not rename it
		c.End()
		_, c = tracer.Start(ctx, "publish", oteltrace.WithSpanKind(oteltrace.SpanKindProducer))
		c.End()
		req.End()
	})
	var regions []string
	for _, ev := range evs {
		if ev.Kind == agenttest.KindRegionBegin {
			regions = append(regions, ev.Name)
		}
	}
	if want := []string{"http up:80", "call publish"}; fmt.Sprint(regions) != fmt.Sprint(want) {
		t.Errorf("regions %q, want %q", regions, want)
	}
	if n, m := len(agenttest.Logs(evs, tracelog.Span)), len(agenttest.Logs(evs, tracelog.SpanEnd)); n != 2 || m != 2 {
		t.Errorf("%d Span and %d SpanEnd logs, want 2 each", n, m)
	}
}

// TestLoneCall: a client span outside any request (a background job's
// call, or one of a request begun before the trace) runs in a task of its
// own marked tracelog.Call, begun before the SDK's task for the span and
// ended after it, and no Request log: an analyser does not take it for a
// request.
func TestLoneCall(t *testing.T) {
	sdk := sdktrace.NewTracerProvider()
	defer sdk.Shutdown(context.Background())
	tracer := Wrap(sdk).Tracer("latscope.test")
	evs := agenttest.Traced(t, func() {
		_, c := tracer.Start(context.Background(), "HTTP GET", oteltrace.WithSpanKind(oteltrace.SpanKindClient))
		c.End()
		c.End() // a second End ends nothing more
	})
	var begun, ended []uint64
	for _, ev := range evs {
		switch {
		case ev.Kind == agenttest.KindTaskBegin && ev.Name == "HTTP GET":
			begun = append(begun, ev.Task)
		case ev.Kind == agenttest.KindTaskEnd && slices.Contains(begun, ev.Task):
			ended = append(ended, ev.Task)
		}
	}
	if len(begun) != 2 {
		t.Fatalf("%d tasks named HTTP GET, want 2 (the call's own and the SDK's inside it)", len(begun))
	}
	calls := agenttest.Logs(evs, tracelog.Call)
	if len(calls) != 1 || calls[0].Task != begun[0] || calls[0].Message != "HTTP GET" {
		t.Errorf("Call logs %+v, want one, \"HTTP GET\", in the first task (%d)", calls, begun[0])
	}
	if want := []uint64{begun[1], begun[0]}; !slices.Equal(ended, want) {
		t.Errorf("tasks ended %v, want the SDK's then the call's: %v", ended, want)
	}
	if n := len(agenttest.Logs(evs, tracelog.Request)); n != 0 {
		t.Errorf("%d Request logs, want none", n)
	}
}
