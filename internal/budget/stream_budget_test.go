package budget_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// These tests feed the analyser synthetic record streams (stream_test.go):
// every duration is a whole number of milliseconds chosen by the test, so
// each expected number follows from the rules of docs/method.md §2–§5 by
// arithmetic, with no tolerance. The live-timing tests in budget_test.go
// check the same rules end to end on real programs.

// Goroutines of the synthetic streams.
const (
	g1 tracein.GoID = iota + 1 // the request goroutine
	g2
	g3
	g4
)

// wantTerm is one expected row of a request type's budget, per request, in
// milliseconds.
type wantTerm struct {
	path   string // application call path, outermost first, joined by " > "
	mech   string // mechanism ("" when user code blocked directly)
	kind   frame.Kind
	wait   int64 // goroutine time
	crit   int64 // time on the critical path
	fix    int64 // latency saved if the term were gone
	causes map[frame.Kind]int64
}

// wantBudget is the expected budget of a request type with one request.
type wantBudget struct {
	latency           int64
	running, runnable [2]int64 // {wait sum, critical}
	forked            int
	terms             []wantTerm
	predictions       map[string]int64 // spec → predicted latency
}

// pathOf joins a term's call path for comparison.
func pathOf(tm budget.Term) string { return strings.Join(tm.Path, " > ") }

// findTerm returns the stat of the term with the given path and kind.
func findTerm(res *budget.Result, g *budget.Group, path string, kind frame.Kind) (budget.TermStat, bool) {
	for _, ts := range g.Terms {
		if tm := res.Terms[ts.Term]; pathOf(tm) == path && tm.Kind == kind {
			return ts, true
		}
	}
	return budget.TermStat{}, false
}

// checkBudget compares the single request of group g with want, term by
// term; a term of g that want does not name is an error too.
func checkBudget(t *testing.T, res *budget.Result, g *budget.Group, want wantBudget) {
	t.Helper()
	invariants(t, res)
	if g.Count != 1 {
		t.Fatalf("%s: %d requests, want 1", g.Name, g.Count)
	}
	if got := g.Latencies[0]; got != want.latency*int64(msec) {
		t.Errorf("latency %v ms, want %d", float64(got)/1e6, want.latency)
	}
	for _, c := range []struct {
		what string
		got  budget.TimeStat
		want [2]int64
	}{{"running", g.Running, want.running}, {"runnable", g.Runnable, want.runnable}} {
		if c.got.Wait != c.want[0]*int64(msec) || c.got.Critical != c.want[1]*int64(msec) {
			t.Errorf("%s: goroutine time %v ms, critical %v ms; want %d, %d", c.what,
				float64(c.got.Wait)/1e6, float64(c.got.Critical)/1e6, c.want[0], c.want[1])
		}
	}
	if g.Forked != want.forked {
		t.Errorf("forked requests %d, want %d", g.Forked, want.forked)
	}
	left := map[critpath.TermID]bool{}
	for _, ts := range g.Terms {
		left[ts.Term] = true
	}
	for _, w := range want.terms {
		ts, ok := findTerm(res, g, w.path, w.kind)
		if !ok {
			t.Errorf("no term %q [%v] in %s", w.path, w.kind, termList(res, g))
			continue
		}
		delete(left, ts.Term)
		tm := res.Terms[ts.Term]
		if tm.Mechanism != w.mech {
			t.Errorf("term %s: mechanism %q, want %q", tm.Name(), tm.Mechanism, w.mech)
		}
		got := [3]int64{ts.Wait, ts.Critical, ts.Fix}
		exp := [3]int64{w.wait * int64(msec), w.crit * int64(msec), w.fix * int64(msec)}
		if got != exp {
			t.Errorf("term %s: wait/critical/fix %v ms, want %v", tm.Name(), msOf(got[:]), msOf(exp[:]))
		}
		var causes [frame.NumKinds]int64
		for k, d := range w.causes {
			causes[k] = d * int64(msec)
		}
		if len(w.causes) == 0 && w.crit > 0 {
			causes[w.kind] = w.crit * int64(msec) // the wait itself
		}
		if ts.Causes != causes {
			t.Errorf("term %s: causes %v, want %v", tm.Name(), causeList(ts.Causes), causeList(causes))
		}
	}
	for id := range left {
		t.Errorf("unexpected term %s", res.Terms[id].Name())
	}
	for spec, lat := range want.predictions {
		found := false
		for _, p := range g.Predictions {
			if p.Spec != spec {
				continue
			}
			found = true
			if !p.Matched || p.Mean != float64(lat*int64(msec)) {
				t.Errorf("%s: predicted %v ms (matched %v), want %d ms", spec, p.Mean/1e6, p.Matched, lat)
			}
		}
		if !found {
			t.Errorf("prediction %s was not evaluated", spec)
		}
	}
}

func msOf(ns []int64) []float64 {
	out := make([]float64, len(ns))
	for i, d := range ns {
		out[i] = float64(d) / 1e6
	}
	return out
}

func causeList(c [frame.NumKinds]int64) string {
	var parts []string
	for k, d := range c {
		if d != 0 {
			parts = append(parts, fmt.Sprintf("%v %v ms", frame.Kind(k), float64(d)/1e6))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func termList(res *budget.Result, g *budget.Group) []string {
	var out []string
	for _, ts := range g.Terms {
		tm := res.Terms[ts.Term]
		out = append(out, fmt.Sprintf("%q [%v]", pathOf(tm), tm.Kind))
	}
	return out
}

// optsWith returns the default options with the given predictions.
func optsWith(t *testing.T, specs ...string) budget.Options {
	t.Helper()
	opts := budget.DefaultOptions
	opts.Predictions = nil
	for _, s := range specs {
		p, err := budget.ParsePrediction(s)
		if err != nil {
			t.Fatal(err)
		}
		opts.Predictions = append(opts.Predictions, p)
	}
	return opts
}

// Blocking stacks, leaf first, as the runtime records them.
var (
	netRead = []string{"runtime.gopark", "runtime.netpollblock", "internal/poll.runtime_pollWait",
		"internal/poll.(*pollDesc).waitRead", "internal/poll.(*FD).Read", "net.(*netFD).Read"}
	waitGroup = []string{"runtime.gopark", "runtime.semacquire1", "sync.runtime_SemacquireWaitGroup", "sync.(*WaitGroup).Wait"}
	errGroup  = append(waitGroup[:len(waitGroup):len(waitGroup)], "golang.org/x/sync/errgroup.(*Group).Wait")
	chanRecv  = []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1"}
)

// under returns the stack of a wait in mech (leaf first) beneath the
// application frames app (innermost first).
func under(mech []string, app ...string) []string {
	return append(mech[:len(mech):len(mech)], app...)
}

// TestStreamHandOff: a wait ended by another goroutine. When the waker is
// outside the request (net/http's readLoop), the wait stays on the critical
// path under the request-side frame and the waker's remembered timeline
// gives its causes; when the waker is a goroutine of the request, the walk
// follows the edge and the waker's own waits are critical instead
// (docs/method.md §4).
func TestStreamHandOff(t *testing.T) {
	roundTrip := []string{"runtime.gopark", "runtime.selectgo", "net/http.(*persistConn).roundTrip",
		"net/http.(*Transport).roundTrip", "net/http.(*Transport).RoundTrip", "net/http.(*Client).do"}
	for _, tt := range []struct {
		name  string
		build func(s *stream)
		want  wantBudget
	}{{
		name: "woken by a transport goroutine of no request",
		build: func(s *stream) {
			readLoop := s.stack(under(netRead, "net/http.(*persistConn).readLoop")...)
			s.status(0, g1, tracein.Running, tracein.NoStack, "")
			s.status(0, g2, tracein.Waiting, readLoop, "network") // readLoop, waiting since before the trace
			s.begin(0, g1, 1, "request")
			s.block(1, g1, "select", s.stack(under(roundTrip, "main.callUpstream", "main.handle")...))
			s.unblock(90, g2, tracein.NoGoroutine) // the response arrives
			s.start(91, g2)
			s.unblock(100, g1, g2) // readLoop hands the response over
			s.block(100, g2, "network", readLoop)
			s.start(101, g1)
			s.end(103, g1, 1, "request")
		},
		want: wantBudget{
			latency: 103, running: [2]int64{3, 3}, runnable: [2]int64{1, 1},
			terms: []wantTerm{{path: "main.handle > main.callUpstream", mech: "net/http.(*persistConn).roundTrip",
				kind: frame.Select, wait: 99, crit: 99, fix: 99,
				causes: map[frame.Kind]int64{frame.Network: 89, frame.Runnable: 1, frame.Running: 9}}},
			predictions: map[string]int64{"remove=callUpstream": 4},
		},
	}, {
		name: "woken by a goroutine of the request",
		build: func(s *stream) {
			s.status(0, g1, tracein.Running, tracein.NoStack, "")
			s.begin(0, g1, 1, "request")
			s.create(1, g1, g3, s.stack("main.handle.func1"))
			s.block(1, g1, "chan receive", s.stack(under(chanRecv, "main.handle")...))
			s.start(1, g3)
			s.block(2, g3, "network", s.stack(under(netRead, "main.fetch", "main.handle.func1")...))
			s.unblock(90, g3, tracein.NoGoroutine)
			s.start(90, g3)
			s.unblock(91, g1, g3) // the result is sent
			s.exit(91, g3)
			s.start(91, g1)
			s.end(93, g1, 1, "request")
		},
		want: wantBudget{
			latency: 93, running: [2]int64{5, 5}, forked: 1,
			terms: []wantTerm{
				{path: "main.handle.func1 > main.fetch", mech: "net.(*netFD).Read", kind: frame.Network, wait: 88, crit: 88, fix: 88},
				// The receive lasted 90 ms but is explained by the sender:
				// removing it saves nothing, the sender still has to send.
				{path: "main.handle", kind: frame.ChanRecv, wait: 90},
			},
			predictions: map[string]int64{"remove=fetch": 5},
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream(t)
			tt.build(s)
			specs := make([]string, 0, len(tt.want.predictions))
			for spec := range tt.want.predictions {
				specs = append(specs, spec)
			}
			res := s.analyze(optsWith(t, specs...))
			checkBudget(t, res, only(t, res), tt.want)
		})
	}
}

// TestStreamForkJoin: a request forks three calls of 30, 80 and 50 ms and
// waits for all of them. The join's wake-up is recorded from the last child
// only; the critical path runs through that child, and removing its wait
// makes the next-slowest child the join's end, not nothing — however the
// join is written (docs/method.md §5, the join rule).
func TestStreamForkJoin(t *testing.T) {
	fetch := []string{"main.fetchA", "main.fetchB", "main.fetchC"}
	children := []tracein.GoID{g2, g3, g4}
	lasting := []tracein.Time{30, 80, 50}
	// Children end at 1+d+1 ms: A at 32, C at 52, B at 82.
	byEnd := []int{0, 2, 1}
	fork := func(s *stream) {
		s.status(0, g1, tracein.Running, tracein.NoStack, "")
		s.begin(0, g1, 1, "request")
		for i, g := range children {
			s.create(1, g1, g, s.stack("main.handle.func1"))
			s.start(1, g)
			s.block(1, g, "network", s.stack(under(netRead, fetch[i], "main.handle.func1")...))
		}
	}
	// finish: child i's response arrives, it runs 1 ms and, if wake, wakes g1.
	finish := func(s *stream, i int, wake bool) tracein.Time {
		at := 1 + lasting[i]
		s.unblock(at, children[i], tracein.NoGoroutine)
		s.start(at, children[i])
		if wake {
			s.unblock(at+1, g1, children[i])
		}
		s.exit(at+1, children[i])
		return at + 1
	}
	joined := func(join []string) func(s *stream) {
		return func(s *stream) {
			fork(s)
			s.block(1, g1, "sync", s.stack(under(join, "main.handle")...))
			var t tracein.Time
			for _, i := range byEnd {
				t = finish(s, i, i == 1) // only the last Done wakes the waiter
			}
			s.start(t, g1)
			s.end(t+2, g1, 1, "request")
		}
	}
	child := func(name string, wait, crit, fix int64) wantTerm {
		return wantTerm{path: "main.handle.func1 > main." + name, mech: "net.(*netFD).Read", kind: frame.Network, wait: wait, crit: crit, fix: fix}
	}
	// A join: the walk goes from the waiter to the last child, and that
	// child's whole wait is critical.
	joinPath := []wantTerm{child("fetchA", 30, 0, 0), child("fetchB", 80, 80, 30), child("fetchC", 50, 0, 0)}
	for _, tt := range []struct {
		name        string
		build       func(s *stream)
		terms       []wantTerm
		critRunning int64
	}{
		{"sync.WaitGroup", joined(waitGroup), append([]wantTerm{
			{path: "main.handle", mech: "sync.(*WaitGroup).Wait", kind: frame.Sync, wait: 81}}, joinPath...),
			1 + 1 + 2},
		{"errgroup.Group", joined(errGroup), append([]wantTerm{
			{path: "main.handle", mech: "sync.(*WaitGroup).Wait", kind: frame.Sync, wait: 81}}, joinPath...),
			1 + 1 + 2},
		// One receive per child, in the order they finish: each receive is
		// explained by its sender back to the receive's start, so the path
		// takes fetchA to 31, fetchC from 32 to 51 and fetchB from 52 to 81
		// (and each sender's 1 ms of CPU). The what-ifs are the join's.
		{"a receive per child", func(s *stream) {
			fork(s)
			recv := s.stack(under(chanRecv, "main.handle")...)
			s.block(1, g1, "chan receive", recv)
			for n, i := range byEnd {
				t := finish(s, i, true)
				s.start(t, g1)
				if n < len(byEnd)-1 {
					s.block(t, g1, "chan receive", recv)
				} else {
					s.end(t+2, g1, 1, "request")
				}
			}
		}, []wantTerm{{path: "main.handle", kind: frame.ChanRecv, wait: 81},
			child("fetchA", 30, 30, 0), child("fetchB", 80, 29, 30), child("fetchC", 50, 19, 0)},
			1 + 3 + 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream(t)
			tt.build(s)
			res := s.analyze(optsWith(t, "remove=fetchB", "remove=fetchA", "remove=fetchC", "scale=fetchB:0.5"))
			checkBudget(t, res, only(t, res), wantBudget{
				// 1 ms before the fork, fetchB's 80 ms and its 1 ms of CPU, 2 ms after the join.
				latency: 84, running: [2]int64{1 + 3 + 2, tt.critRunning}, forked: 1,
				terms: tt.terms,
				predictions: map[string]int64{
					"remove=fetchB":    54, // fetchC (ends at 52) becomes the join's end
					"remove=fetchA":    84,
					"remove=fetchC":    84,
					"scale=fetchB:0.5": 54, // fetchB now ends at 42, fetchC still at 52
				},
			})
		})
	}
}

// TestStreamCutRequests: tasks cut by the trace window are counted per
// request type and never enter the latency (docs/method.md §2).
func TestStreamCutRequests(t *testing.T) {
	// whole adds a complete 10 ms request of type name on goroutine g.
	whole := func(s *stream, g tracein.GoID, id tracein.TaskID, name string, at tracein.Time) {
		s.begin(at, g, id, name)
		s.end(at+10, g, id, name)
	}
	for _, tt := range []struct {
		name                   string
		build                  func(s *stream)
		count, before, after   int
		untyped, nested, tasks int
		finding                string
	}{
		{"complete", func(s *stream) { whole(s, g1, 1, "request", 0) }, 1, 0, 0, 0, 0, 1, ""},
		{"began before the trace, typed end", func(s *stream) {
			s.end(5, g2, 7, "request")
			whole(s, g1, 1, "request", 10)
		}, 1, 1, 0, 0, 0, 1, "request: 1 request(s) cut by the trace window are excluded (1 began before it, 0 had not ended)"},
		{"began before the trace, untyped end", func(s *stream) {
			s.end(5, g2, 7, "")
			whole(s, g1, 1, "request", 10)
		}, 1, 0, 0, 1, 0, 1, "1 task(s) that began before the trace are excluded"},
		{"not ended", func(s *stream) {
			whole(s, g1, 1, "request", 0)
			s.begin(20, g2, 2, "request")
		}, 1, 0, 1, 0, 0, 2, "(0 began before it, 1 had not ended)"},
		{"a sub-task is part of its parent", func(s *stream) {
			s.begin(0, g1, 1, "request")
			s.evs = append(s.evs, tracein.Event{Kind: tracein.KindTaskBegin, Time: 2 * msec, G: g1, Task: 2, Parent: 1, Name: "step"})
			s.end(4, g1, 2, "step")
			s.end(10, g1, 1, "request")
		}, 1, 0, 0, 0, 1, 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream(t)
			s.status(0, g1, tracein.Running, tracein.NoStack, "")
			s.status(0, g2, tracein.Running, tracein.NoStack, "")
			tt.build(s)
			res := s.analyze(optsWith(t))
			g := only(t, res)
			if g.Name != "request" || g.Count != tt.count || g.ExcludedBefore != tt.before || g.ExcludedAfter != tt.after {
				t.Errorf("group %q: %d requests, %d began before, %d not ended; want \"request\": %d, %d, %d",
					g.Name, g.Count, g.ExcludedBefore, g.ExcludedAfter, tt.count, tt.before, tt.after)
			}
			if i := res.Info; i.ExcludedUntyped != tt.untyped || i.NestedTasks != tt.nested || i.Tasks != tt.tasks {
				t.Errorf("trace: %d untyped cut, %d nested, %d tasks; want %d, %d, %d",
					i.ExcludedUntyped, i.NestedTasks, i.Tasks, tt.untyped, tt.nested, tt.tasks)
			}
			if len(g.Latencies) != 1 || g.Latencies[0] != int64(10*msec) {
				t.Errorf("latencies %v, want the complete request's 10 ms alone", g.Latencies)
			}
			var cut []string
			for _, w := range res.Warnings {
				if f, ok := w.(*budget.Finding); ok && f.Kind == budget.FindCutByWindow {
					cut = append(cut, f.Text)
				}
			}
			switch {
			case tt.finding == "" && len(cut) > 0:
				t.Errorf("cut-by-window findings %q, want none", cut)
			case tt.finding != "" && (len(cut) != 1 || !strings.Contains(cut[0], tt.finding)):
				t.Errorf("cut-by-window findings %q, want one containing %q", cut, tt.finding)
			}
		})
	}
}

// TestStreamWaitAttribution: scheduler wait (runnable: preempted, or woken
// and waiting for a P) is never charged to the frame beneath the wait
// before it; each off-CPU wait and syscall is charged to the application
// frame beneath it and its mechanism (docs/method.md §2–§3).
func TestStreamWaitAttribution(t *testing.T) {
	s := newStream(t)
	s.status(0, g1, tracein.Running, tracein.NoStack, "")
	s.begin(0, g1, 1, "request")
	s.preempt(2, g1)
	s.start(5, g1) // 3 ms runnable: preempted
	s.block(6, g1, "network", s.stack(under(netRead, "main.queryDB", "main.handle")...))
	s.unblock(46, g1, tracein.NoGoroutine)
	s.start(50, g1) // 4 ms runnable: woken, waiting for a P
	s.block(51, g1, "sleep", s.stack("runtime.gopark", "time.Sleep", "main.backoff", "main.handle"))
	s.unblock(61, g1, tracein.NoGoroutine)
	s.start(61, g1)
	s.syscall(62, g1, s.stack("syscall.Syscall", "syscall.read", "os.(*File).Read", "main.readConfig", "main.handle"))
	s.sysret(64, g1)
	s.block(65, g1, "select", s.stack("runtime.gopark", "runtime.selectgo", "net/http.(*Transport).getConn"))
	s.unblock(66, g1, tracein.NoGoroutine)
	s.start(66, g1)
	s.end(67, g1, 1, "request")
	res := s.analyze(optsWith(t))
	checkBudget(t, res, only(t, res), wantBudget{
		latency: 67, running: [2]int64{7, 7}, runnable: [2]int64{7, 7},
		terms: []wantTerm{
			{path: "main.handle > main.queryDB", mech: "net.(*netFD).Read", kind: frame.Network, wait: 40, crit: 40, fix: 40},
			{path: "main.handle > main.backoff", mech: "time.Sleep", kind: frame.Sleep, wait: 10, crit: 10, fix: 10},
			{path: "main.handle > main.readConfig", mech: "syscall.Syscall", kind: frame.Syscall, wait: 2, crit: 2, fix: 2},
			{path: "", mech: "net/http.(*Transport).getConn", kind: frame.Select, wait: 1, crit: 1, fix: 1},
		},
	})
}

// TestStreamCallPathNames: waits beneath one shared helper are separate
// terms when different application frames called it, and each term is
// named by the shortest suffix of its call path that no other path ends in
// (docs/method.md §3, Names).
func TestStreamCallPathNames(t *testing.T) {
	s := newStream(t)
	type wait struct {
		task tracein.TaskID
		name string
		app  []string // innermost first
	}
	waits := []wait{
		{1, "getUser", []string{"main.query", "main.getUser"}},
		{1, "getUser", []string{"main.callUpstream", "main.getUser"}},
		{2, "listOrders", []string{"main.query", "main.listOrders"}},
		{2, "listOrders", []string{"main.query", "main.walk", "main.walk", "main.listOrders"}}, // recursion folds
		{2, "listOrders", []string{"main.query", "main.listOrders.func1", "main.listOrders"}},
	}
	s.status(0, g1, tracein.Running, tracein.NoStack, "")
	s.status(0, g2, tracein.Running, tracein.NoStack, "")
	s.begin(0, g1, 1, "getUser")
	s.begin(0, g2, 2, "listOrders")
	t1 := map[tracein.TaskID]tracein.Time{1: 0, 2: 0}
	for i, w := range waits {
		g := tracein.GoID(w.task)
		at := t1[w.task]
		s.block(at, g, "network", s.stack(under(netRead, w.app...)...))
		s.unblock(at+tracein.Time(i+1), g, tracein.NoGoroutine)
		s.start(at+tracein.Time(i+1), g)
		t1[w.task] = at + tracein.Time(i+1)
	}
	s.end(t1[1], g1, 1, "getUser")
	s.end(t1[2], g2, 2, "listOrders")
	res := s.analyze(optsWith(t, "remove=getUser>query"))
	invariants(t, res)

	want := map[string]struct {
		label string
		wait  int64
	}{
		"main.getUser > main.query":                            {"main.getUser › query", 1},
		"main.getUser > main.callUpstream":                     {"main.callUpstream", 2},
		"main.listOrders > main.query":                         {"main.listOrders › query", 3},
		"main.listOrders > main.walk > main.query":             {"main.walk › query", 4},
		"main.listOrders > main.listOrders.func1 > main.query": {"main.listOrders.func1 › query", 5},
	}
	labels := budget.Labels(res.Terms)
	for i, tm := range res.Terms {
		w, ok := want[pathOf(tm)]
		if !ok {
			t.Errorf("unexpected term %q", pathOf(tm))
			continue
		}
		delete(want, pathOf(tm))
		if labels[i] != w.label {
			t.Errorf("term %q is named %q, want %q", pathOf(tm), labels[i], w.label)
		}
		var wait int64
		for _, g := range res.Groups {
			if ts, ok := findTerm(res, g, pathOf(tm), frame.Network); ok {
				wait += ts.Wait
			}
		}
		if wait != w.wait*int64(msec) {
			t.Errorf("term %q: wait %v ms, want %d (its own wait only)", pathOf(tm), float64(wait)/1e6, w.wait)
		}
	}
	for p := range want {
		t.Errorf("no term %q", p)
	}
	for _, g := range res.Groups {
		p := g.Predictions[0]
		wantMean := map[string]float64{"getUser": 2e6, "listOrders": 12e6}[g.Name] // getUser's 1 ms query only
		if !p.Matched || p.Mean != wantMean {
			t.Errorf("%s: %s predicts %v ms, want %v", g.Name, p.Spec, p.Mean/1e6, wantMean/1e6)
		}
	}
}
