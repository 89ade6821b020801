package agentgrpc

import (
	"context"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/tracelog"
)

// TestInterceptors runs a real grpc-go server with the server interceptors
// and a client with the client interceptors on loopback, under
// runtime/trace: n rounds of a unary, a server-streaming and a
// bidirectional RPC, each made inside a request of the client's (a task with
// a traceparent, as the agent's Handler makes). The trace must hold one
// task per RPC served, named by its full method; a Request log in each with
// the caller's trace ID and a span of its own; one region per call made,
// with the RPC log of the traceparent sent, which the server received; one
// SpanEnd log per stream, in the caller's task. The metrics count each
// method's RPCs, and each handler's context is the request's.
func TestInterceptors(t *testing.T) {
	const n = 12
	m := newCounts()
	a, err := agent.New(agent.Options{NoRecorder: true, ProbeEvery: -1, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var handlerTP sync.Map // traceparent text → method, as the handler's context has it
	svc := &items{Pages: 3, PageCost: time.Millisecond, Seen: func(method string, ctx context.Context) {
		tp, ok := agent.TraceParent(ctx)
		if !ok {
			t.Errorf("%s: the handler's context is no request of the agent's", method)
			return
		}
		handlerTP.Store(tp.String(), method)
	}}
	cc := serve(t, a, svc, false)

	evs := agenttest.Traced(t, func() {
		ctx, task := agenttest.JobContext()
		defer task.End()
		for range n {
			if err := callGet(ctx, cc); err != nil {
				t.Fatal(err)
			}
			if pages, err := callList(ctx, cc); err != nil || pages != svc.Pages {
				t.Fatalf("List: %d pages, %v; want %d", pages, err, svc.Pages)
			}
			if err := callEcho(ctx, cc, 3); err != nil {
				t.Fatal(err)
			}
		}
	})

	tasks := map[string]int{}
	taskName := map[uint64]string{}
	var job uint64
	for _, ev := range evs {
		if ev.Kind == agenttest.KindTaskBegin {
			tasks[ev.Name]++
			taskName[ev.Task] = ev.Name
			if ev.Name == "job" {
				job = ev.Task
			}
		}
	}
	rq := tracelog.RPCRequestPrefix // an RPC's task is named as the analyser infers it
	want := map[string]int{rq + getMethod: n, rq + listMethod: n, rq + echoMethod: n, "job": 1}
	if !maps.Equal(tasks, want) {
		t.Errorf("tasks %v, want %v", tasks, want)
	}
	if got, wantM := m.snapshot(), map[string]int{rq + getMethod: n, rq + listMethod: n, rq + echoMethod: n}; !maps.Equal(got, wantM) {
		t.Errorf("metrics' routes %v, want %v", got, wantM)
	}

	// The server's side: a Request log in each RPC's task, with the
	// caller's trace.
	served := map[string]string{} // request traceparent → method
	for _, ev := range agenttest.Logs(evs, tracelog.Request) {
		tp, err := tracelog.ParseTraceParent(ev.Message)
		if err != nil {
			t.Fatal(err)
		}
		method := taskName[ev.Task]
		if method == "" || method == "job" {
			t.Errorf("Request log %q in task %q, want an RPC's", ev.Message, method)
		}
		if tp.TraceID != agenttest.JobSpan.TraceID || tp.SpanID == agenttest.JobSpan.SpanID {
			t.Errorf("%s: request traceparent %v, want the caller's trace %x with a span of its own", method, tp, agenttest.JobSpan.TraceID)
		}
		served[ev.Message] = method
	}
	if len(served) != 3*n {
		t.Errorf("%d distinct Request logs, want %d (one per RPC)", len(served), 3*n)
	}
	for tpText, method := range served {
		if got, ok := handlerTP.Load(tpText); !ok || rq+got.(string) != method {
			t.Errorf("request %s of %s: the handler saw %v", tpText, method, got)
		}
	}

	// The client's side: a region per call with the traceparent sent, in
	// the caller's task.
	regions := map[string]int{}
	for _, ev := range evs {
		if ev.Kind == agenttest.KindRegionBegin {
			regions[ev.Name]++
			if ev.Task != job {
				t.Errorf("region %q in task %q, want the caller's", ev.Name, taskName[ev.Task])
			}
		}
	}
	wantRegions := map[string]int{"rpc " + getMethod: n, "rpc " + listMethod: n, "rpc " + echoMethod: n}
	if !maps.Equal(regions, wantRegions) {
		t.Errorf("regions %v, want %v", regions, wantRegions)
	}
	sent := map[string]bool{}
	for _, ev := range agenttest.Logs(evs, tracelog.RPC) {
		tp, err := tracelog.ParseTraceParent(ev.Message)
		if err != nil {
			t.Fatal(err)
		}
		if tp.TraceID != agenttest.JobSpan.TraceID || !strings.HasPrefix(regionAround(evs, ev), "rpc ") {
			t.Errorf("RPC log %q (region %q): want the caller's trace, inside the call's region", ev.Message, regionAround(evs, ev))
		}
		sent[ev.Message] = true
	}
	if len(sent) != 3*n {
		t.Errorf("%d distinct RPC logs, want %d", len(sent), 3*n)
	}
	ends := agenttest.Logs(evs, tracelog.SpanEnd)
	if len(ends) != 2*n {
		t.Errorf("%d SpanEnd logs, want %d (one per stream)", len(ends), 2*n)
	}
	for _, ev := range ends {
		e, err := tracelog.ParseSpanEnd(ev.Message)
		if err != nil {
			t.Fatal(err)
		}
		if !sent[e.TraceParent.String()] || ev.Task != job || e.Duration <= 0 {
			t.Errorf("SpanEnd %q in task %q: want a stream's traceparent, in the caller's task, with its duration", ev.Message, taskName[ev.Task])
		}
	}
	t.Logf("tasks %v; regions %v; %d stream ends", tasks, regions, len(ends))
}

// regionAround returns the innermost region open around ev on its
// goroutine.
func regionAround(evs []agenttest.Event, ev agenttest.Event) string {
	var open []string
	for _, e := range evs {
		if e.G != ev.G {
			continue
		}
		switch {
		case e == ev:
			if len(open) == 0 {
				return ""
			}
			return open[len(open)-1]
		case e.Kind == agenttest.KindRegionBegin:
			open = append(open, e.Name)
		case e.Kind == agenttest.KindRegionEnd && len(open) > 0:
			open = open[:len(open)-1]
		}
	}
	return ""
}

// TestNewTrace: an RPC whose caller sent no traceparent (a client without
// the interceptors) starts a new, unsampled trace; one with an invalid
// traceparent too; a client outside any request sends a new trace.
func TestNewTrace(t *testing.T) {
	a, err := agent.New(agent.Options{NoRecorder: true, ProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var seen []string
	var mu sync.Mutex
	svc := &items{Seen: func(_ string, ctx context.Context) {
		tp, _ := agent.TraceParent(ctx)
		mu.Lock()
		seen = append(seen, tp.String())
		mu.Unlock()
	}}
	plain := serve(t, a, svc, true)
	evs := agenttest.Traced(t, func() {
		ctx := context.Background()
		if err := callGet(ctx, plain); err != nil {
			t.Fatal(err)
		}
		if err := callGet(withTraceParent(ctx, "00-zz-bad"), plain); err != nil {
			t.Fatal(err)
		}
	})
	logs := agenttest.Logs(evs, tracelog.Request)
	if len(logs) != 2 || len(seen) != 2 {
		t.Fatalf("%d Request logs, %d handlers, want 2", len(logs), len(seen))
	}
	for i, ev := range logs {
		tp, err := tracelog.ParseTraceParent(ev.Message)
		if err != nil || tp.Flags != 0 || ev.Message != seen[i] {
			t.Errorf("request %d: %q (%v), handler saw %q; want a new unsampled trace, the same", i, ev.Message, err, seen[i])
		}
	}

	// A client with the interceptors outside any request: a new trace.
	svc2 := &items{}
	cc := serve(t, a, svc2, false)
	evs = agenttest.Traced(t, func() {
		if err := callGet(context.Background(), cc); err != nil {
			t.Fatal(err)
		}
	})
	rpc, req := agenttest.Logs(evs, tracelog.RPC), agenttest.Logs(evs, tracelog.Request)
	if len(rpc) != 1 || len(req) != 1 {
		t.Fatalf("%d RPC and %d Request logs, want 1 each", len(rpc), len(req))
	}
	sent, _ := tracelog.ParseTraceParent(rpc[0].Message)
	got, _ := tracelog.ParseTraceParent(req[0].Message)
	if !sent.IsValid() || sent.TraceID != got.TraceID || sent.SpanID == got.SpanID {
		t.Errorf("sent %v, served %v: want one trace, two spans", sent, got)
	}
}

// TestKeepsOutgoingTraceParent: a call whose outgoing metadata already
// carries a valid traceparent (another tracing system's) keeps it, and the
// region logs it.
func TestKeepsOutgoingTraceParent(t *testing.T) {
	const theirs = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	a, err := agent.New(agent.Options{NoRecorder: true, ProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cc := serve(t, a, &items{}, false)
	evs := agenttest.Traced(t, func() {
		ctx, task := agenttest.JobContext()
		defer task.End()
		if err := callGet(withTraceParent(ctx, theirs), cc); err != nil {
			t.Fatal(err)
		}
	})
	rpc, req := agenttest.Logs(evs, tracelog.RPC), agenttest.Logs(evs, tracelog.Request)
	if len(rpc) != 1 || rpc[0].Message != theirs {
		t.Fatalf("RPC logs %v, want %q", rpc, theirs)
	}
	if len(req) != 1 || !strings.HasPrefix(req[0].Message, theirs[:36]) || req[0].Message == theirs {
		t.Errorf("Request logs %v: want %q's trace with a span of its own", req, theirs)
	}
}

// TestServerAllocs counts what the server interceptors add to an RPC: the
// agent's BeginContext (its task and context) and the Request log; 4
// allocations when measured, 7 when an RPC was given to Begin as an HTTP
// request.
func TestServerAllocs(t *testing.T) {
	a, err := agent.New(agent.Options{NoRecorder: true, ProbeEvery: -1, Metrics: newCounts()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(traceParentKey, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
	info := &grpc.UnaryServerInfo{FullMethod: getMethod}
	h := func(ctx context.Context, req any) (any, error) { return req, nil }
	ic := UnaryServer(a)
	ic(ctx, nil, info, h)
	n := testing.AllocsPerRun(200, func() { ic(ctx, nil, info, h) })
	t.Logf("the unary server interceptor: %g allocations per RPC (tracer off)", n)
	if n > 5 && !race {
		t.Errorf("%g allocations per RPC, want at most 5", n)
	}
}

// counts is an agent.Metrics that counts each route's requests.
type counts struct {
	mu     sync.Mutex
	routes map[string]*routeCount
}

type routeCount struct{ n atomic.Int64 }

func newCounts() *counts { return &counts{routes: map[string]*routeCount{}} }

func (m *counts) Open(bool) error     { return nil }
func (m *counts) Close()              {}
func (m *counts) RouteOverLimit()     {}
func (m *counts) Stall(time.Duration) {}

func (m *counts) Route(route string) agent.RouteMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.routes[route]
	if c == nil {
		c = &routeCount{}
		m.routes[route] = c
	}
	return c
}

func (m *counts) snapshot() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for r, c := range m.routes {
		if n := int(c.n.Load()); n > 0 {
			out[r] = n
		}
	}
	return out
}

func (c *routeCount) Request(agent.RequestStats) { c.n.Add(1) }
func (c *routeCount) DBCall(time.Duration)       {}
