package budget_test

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// logIn appends a trace log of category cat in task id, on g.
func (s *stream) logIn(ms tracein.Time, g tracein.GoID, id tracein.TaskID, cat, msg string) {
	s.evs = append(s.evs, tracein.Event{Kind: tracein.KindLog, Time: ms * msec, G: g, Task: id, Name: cat, Message: msg})
}

// beginIn begins task id, a sub-task of parent.
func (s *stream) beginIn(ms tracein.Time, g tracein.GoID, id, parent tracein.TaskID, name string) {
	s.evs = append(s.evs, tracein.Event{Kind: tracein.KindTaskBegin, Time: ms * msec, G: g, Task: id, Parent: parent, Name: name})
}

const (
	traceA = "4bf92f3577b34da6a3ce929d0e0e4736"
	traceB = "0af7651916cd43dd8448eb211c80319c"
)

func tp(trace string) string { return "00-" + trace + "-00f067aa0ba902b7-01" }

// otelStream is what agentotel writes for requests of two routes, around
// requests the trace cut: tasks named "GET" renamed by their route log,
// the SDK's tasks of a cut request's spans, a request still open at the end.
func otelStream(t *testing.T) *stream {
	s := newStream(t)
	s.status(0, 1, tracein.Running, tracein.NoStack, "")
	// A request begun before the trace: its route log, then its end.
	s.logIn(1, 1, 20, tracelog.Route, "GET /orders")
	s.end(2, 1, 20, "")
	// The SDK's tasks of a cut request's child spans (its parent 99 began
	// before the trace), and a sub-task of one.
	s.beginIn(3, 1, 10, 99, "HTTP GET")
	s.beginIn(4, 1, 11, 10, "HTTP GET")
	s.end(5, 1, 11, "HTTP GET")
	s.end(6, 1, 10, "HTTP GET")
	// Three requests, two of trace A; the SDK's task inside the first.
	s.begin(10, 1, 1, "GET")
	s.logIn(10, 1, 1, tracelog.Request, tp(traceA))
	s.beginIn(11, 1, 2, 1, "GET")
	s.logIn(11, 1, 2, tracelog.Request, tp(traceB)) // a sub-task's: not the request's
	s.end(12, 1, 2, "GET")
	s.logIn(14, 1, 1, tracelog.Route, "GET /users/{id}")
	s.end(14, 1, 1, "GET")
	s.begin(20, 1, 3, "GET")
	s.logIn(20, 1, 3, tracelog.Request, tp(traceB))
	s.logIn(22, 1, 3, tracelog.Route, "GET /orders")
	s.end(22, 1, 3, "GET")
	s.begin(30, 1, 4, "GET")
	s.logIn(30, 1, 4, tracelog.Request, tp(traceA))
	s.logIn(39, 1, 4, tracelog.Route, "GET /users/{id}")
	s.end(39, 1, 4, "GET")
	// Still open at the end: its route is not in the trace.
	s.begin(40, 1, 5, "GET")
	s.logIn(40, 1, 5, tracelog.Request, tp(traceB))
	s.preempt(45, 1)
	return s
}

func groupNamed(t *testing.T, res *budget.Result, name string) *budget.Group {
	t.Helper()
	var names []string
	for _, g := range res.Groups {
		if g.Name == name {
			return g
		}
		names = append(names, g.Name)
	}
	t.Fatalf("no group %q in %q", name, names)
	return nil
}

func TestRouteLogsAndTraceIDs(t *testing.T) {
	res := otelStream(t).analyze(budget.DefaultOptions)
	if len(res.Groups) != 2 {
		var names []string
		for _, g := range res.Groups {
			names = append(names, g.Name)
		}
		t.Fatalf("groups %q, want the two routes", names)
	}
	users, orders := groupNamed(t, res, "GET /users/{id}"), groupNamed(t, res, "GET /orders")
	if users.Count != 2 || orders.Count != 1 || orders.ExcludedBefore != 1 {
		t.Errorf("users %d, orders %d (%d began before): want 2, 1 (1)", users.Count, orders.Count, orders.ExcludedBefore)
	}
	if res.Info.OrphanTasks != 2 || res.Info.ExcludedUnrouted != 1 || res.Info.ExcludedUntyped != 0 {
		t.Errorf("orphans %d, unrouted %d, untyped %d: want 2, 1, 0", res.Info.OrphanTasks, res.Info.ExcludedUnrouted, res.Info.ExcludedUntyped)
	}
	st := users.SlowTraces
	if len(st) != 2 || st[0].TraceID.String() != traceA || st[0].Latency != int64(9*msec) || st[1].Latency != int64(4*msec) || users.Traced != 2 {
		t.Errorf("users' slow traces %+v (traced %d)", st, users.Traced)
	}
	if users.Slowest == nil || users.Slowest.TraceID.String() != traceA {
		t.Errorf("slowest path %+v", users.Slowest)
	}
	var said []string
	for _, w := range res.Warnings {
		said = append(said, w.Error())
	}
	all := strings.Join(said, "\n")
	for _, want := range []string{"2 task(s) whose parent task began before the trace are excluded", "1 request(s) still open at the trace's end"} {
		if !strings.Contains(all, want) {
			t.Errorf("no finding says %q; findings:\n%s", want, all)
		}
	}
}

func TestTraceIDOption(t *testing.T) {
	opts := budget.DefaultOptions
	opts.TraceID = strings.ToUpper(traceA)
	res := otelStream(t).analyze(opts)
	if len(res.Groups) != 1 || res.Groups[0].Name != "GET /users/{id}" || res.Groups[0].Count != 2 {
		t.Fatalf("trace A: groups %+v, want GET /users/{id} with its 2 requests", res.Groups)
	}
	if g := res.Groups[0]; g.Excluded() != 0 {
		t.Errorf("trace A: %d excluded, want 0", g.Excluded())
	}
	opts.TraceID = traceB
	res = otelStream(t).analyze(opts)
	if len(res.Groups) != 1 || res.Groups[0].Name != "GET /orders" || res.Groups[0].Count != 1 {
		t.Fatalf("trace B: groups %+v, want GET /orders with 1 request (a sub-task's log is not its request's)", res.Groups)
	}
	for _, id := range []string{"0af7651916cd43dd8448eb211c80319d", "xyz", "00000000000000000000000000000000"} {
		opts.TraceID = id
		res = otelStream(t).analyze(opts)
		var refused *budget.Finding
		for _, w := range res.Warnings {
			if f, ok := w.(*budget.Finding); ok && f.Refuse {
				refused = f
			}
		}
		if refused == nil || refused.Kind != budget.FindNoMatch || !strings.Contains(refused.Text, strings.ToLower(id[:3])) {
			t.Errorf("trace ID %s: refusal %+v, want a no-match naming it", id, refused)
		}
	}
}

func TestParseTraceID(t *testing.T) {
	if id, err := budget.ParseTraceID(traceA); err != nil || id.String() != traceA {
		t.Errorf("ParseTraceID(%s) = %s, %v", traceA, id, err)
	}
	for _, bad := range []string{"", "4bf92f35", traceA + "00", "4bf92f3577b34da6a3ce929d0e0e473g", "00000000000000000000000000000000"} {
		_, err := budget.ParseTraceID(bad)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseTraceID(%q): %v, want a one-line error naming it", bad, err)
		}
	}
}
