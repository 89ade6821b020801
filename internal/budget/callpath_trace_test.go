package budget_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/demotrace"
	"github.com/latscope/latscope/internal/fixture"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/render"
)

// The call-path workload: every wait goes through one shared helper,
// (*store).query, a real round trip over loopback TCP to a server that
// answers after the number of milliseconds it is sent. Only the callers
// differ, so only call-path terms can tell the waits apart.
// Each call has its own delay, so that the client's own timing of each
// is known apart (the serial and parallel requests call the same helpers).
const (
	userMs      = 4  // getUser's query, serial request
	ordersMs    = 16 // listOrders's query, serial request
	parUserMs   = 5  // the same, parallel request
	parOrdersMs = 17
	retryMs     = 6 // the nested call: retry › do › query
	walkMs      = 3 // beneath a recursion
)

// slowServer answers "N\n" with "ok\n" after N ms.
func slowServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					n, _ := strconv.Atoi(strings.TrimSpace(line))
					time.Sleep(time.Duration(n) * time.Millisecond)
					if _, err := c.Write([]byte("ok\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// store is the client of slowServer. It times every answer by its own
// clock, by server delay: the ground truth for the terms' waits.
type store struct {
	addr  string
	mu    sync.Mutex
	timed map[int]time.Duration // Σ time from the request sent to the answer read
	calls map[int]int
}

// query is the shared helper under every wait.
//
//go:noinline
func (s *store) query(ms int) error {
	start := time.Now()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "%d\n", ms); err != nil {
		return err
	}
	_, err = bufio.NewReader(c).ReadString('\n')
	d := time.Since(start)
	s.mu.Lock()
	s.timed[ms] += d
	s.calls[ms]++
	s.mu.Unlock()
	return err
}

// clientMs is the client's own mean time for the calls of a delay, from
// before the dial to the answer read.
func (s *store) clientMs(ms int) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return float64(s.timed[ms]) / float64(max(s.calls[ms], 1)) / 1e6
}

//go:noinline
func getUser(s *store, ms int) error { return s.query(ms) }

//go:noinline
func listOrders(s *store, ms int) error { return s.query(ms) }

// do and retry nest helpers: retry › do › query.
//
//go:noinline
func do(s *store) error { return s.query(retryMs) }

//go:noinline
func retry(s *store, f func(*store) error) error {
	var err error
	for range 2 {
		if err = f(s); err == nil {
			return nil
		}
	}
	return err
}

//go:noinline
func walk(s *store, depth int) error {
	if depth == 0 {
		return s.query(walkMs)
	}
	return walk(s, depth-1)
}

// callPathTrace records the workload: requests of each type, by 3 clients.
// withUser=false drops getUser from the serial request (the real fix that
// remove=getUser predicts).
func callPathTrace(t *testing.T, withUser bool) (string, *store) {
	t.Helper()
	s := &store{addr: slowServer(t), timed: map[int]time.Duration{}, calls: map[int]int{}}
	requests := map[string]func(ctx context.Context) error{
		"serial": func(context.Context) error {
			if withUser {
				if err := getUser(s, userMs); err != nil {
					return err
				}
			}
			return listOrders(s, ordersMs)
		},
		"parallel": func(context.Context) error {
			var wg sync.WaitGroup
			var uerr error
			wg.Go(func() { uerr = getUser(s, parUserMs) })
			err := listOrders(s, parOrdersMs)
			wg.Wait()
			if err == nil {
				err = uerr
			}
			return err
		},
		"nested": func(context.Context) error { return retry(s, do) },
		"recursive": func(context.Context) error {
			return walk(s, 5)
		},
	}
	path := filepath.Join(t.TempDir(), "callpath.trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := trace.Start(f); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for c := range 3 {
		wg.Go(func() {
			for i := range 40 {
				name := []string{"serial", "parallel", "nested", "recursive"}[(i+c)%4]
				ctx, task := trace.NewTask(context.Background(), name)
				err := requests[name](ctx)
				task.End()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	trace.Stop()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return path, s
}

func group(t *testing.T, res *budget.Result, name string) *budget.Group {
	t.Helper()
	for _, g := range res.Groups {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no request type %q", name)
	return nil
}

// pathTerm returns the network term of g whose call path ends in names
// (short function names, outermost first).
func pathTerm(t *testing.T, res *budget.Result, g *budget.Group, names ...string) budget.TermStat {
	t.Helper()
	for _, ts := range g.Terms {
		tm := res.Terms[ts.Term]
		if tm.Kind != frame.Network || len(tm.Path) < len(names) {
			continue
		}
		ok := true
		for i, n := range names {
			if !budget.MatchName(tm.Path[len(tm.Path)-len(names)+i], n) {
				ok = false
			}
		}
		if ok {
			return ts
		}
	}
	var got []string
	for _, ts := range g.Terms {
		got = append(got, strings.Join(res.Terms[ts.Term].Path, " > "))
	}
	t.Fatalf("%s: no network term beneath %v; paths: %q", g.Name, names, got)
	return budget.TermStat{}
}

// perReq is a per-request sum in milliseconds.
func perReq(sum int64, g *budget.Group) float64 { return float64(sum) / float64(g.Count) / 1e6 }

// timedAs checks a term's wait per request against the client's own timing
// of the same answers: the wait cannot be shorter than the server's delay,
// nor longer than the client saw from sending to reading (which also holds
// the time the client goroutine waited for a CPU after the answer came).
func timedAs(t *testing.T, what string, got float64, s *store, delay int) {
	t.Helper()
	if client := s.clientMs(delay); got < float64(delay)*0.98 || got > client+0.05 {
		t.Errorf("%s: %.2f ms per request; the server's delay is %d ms and the client timed %.2f ms", what, got, delay, client)
	}
}

func TestCallPathTerms(t *testing.T) {
	path, s := callPathTrace(t, true)
	opts := budget.DefaultOptions
	res := fixture.Analyze(t, path, opts)
	invariants(t, res)

	// Serial: one helper, two callers, two terms, each its own duration.
	g := group(t, res, "serial")
	u := pathTerm(t, res, g, "getUser", "query")
	o := pathTerm(t, res, g, "listOrders", "query")
	if u.Term == o.Term {
		t.Fatal("serial: getUser's and listOrders's queries are one term")
	}
	timedAs(t, "serial getUser › query critical", perReq(u.Critical, g), s, userMs)
	timedAs(t, "serial listOrders › query critical", perReq(o.Critical, g), s, ordersMs)

	// Parallel: both wait, only the longer one is on the critical path.
	g = group(t, res, "parallel")
	u = pathTerm(t, res, g, "getUser", "query")
	o = pathTerm(t, res, g, "listOrders", "query")
	timedAs(t, "parallel getUser › query wait", perReq(u.Wait, g), s, parUserMs)
	timedAs(t, "parallel listOrders › query critical", perReq(o.Critical, g), s, parOrdersMs)
	// getUser's query ends before listOrders's unless the host delays it by
	// more than their difference; its critical time is what such delays left.
	if c, w := perReq(u.Critical, g), perReq(u.Wait, g); c > w/4 {
		t.Errorf("parallel getUser › query: %.2f of %.2f ms on the critical path, want little (listOrders's is %d ms, getUser's %d)", c, w, parOrdersMs, parUserMs)
	}

	// Nested helpers: the wait is beneath retry › do › query.
	g = group(t, res, "nested")
	timedAs(t, "nested retry › do › query", perReq(pathTerm(t, res, g, "retry", "do", "query").Critical, g), s, retryMs)

	// Recursion folds to one frame: walk › query, one term.
	g = group(t, res, "recursive")
	w := pathTerm(t, res, g, "walk", "query")
	timedAs(t, "recursive walk › query", perReq(w.Critical, g), s, walkMs)
	for _, ts := range g.Terms {
		p := res.Terms[ts.Term].Path
		for i := 1; i < len(p); i++ {
			if p[i] == p[i-1] {
				t.Errorf("recursion not folded: %q", p)
			}
		}
	}

	// Labels: the shortest unique suffix (getUser is called from two
	// closures, so its label starts one frame further out).
	labels := budget.Labels(res.Terms)
	for _, want := range []string{"getUser › (*store).query", "listOrders › (*store).query",
		"budget_test.do › (*store).query", "budget_test.walk › (*store).query"} {
		found := false
		for _, l := range labels {
			found = found || strings.HasSuffix(l, want)
		}
		if !found {
			t.Errorf("no label %q in %d labels", want, len(labels))
		}
	}
	// "query" is one function under four callers: not ambiguous.
	if err := budget.CheckName(res.Terms, "query"); err != nil {
		t.Errorf("CheckName(query): %v", err)
	}
}

// tolerance is how far a prediction from trace b may be from the mean of
// trace a, in ms: what latscope compare calls a hit (render.DefaultMissPct
// of the measured mean), plus three standard errors of the difference of
// two means, from the requests' own spread in both runs (two runs differ
// by chance).
func tolerance(b, a *budget.Group) float64 {
	return a.Latency.Mean/1e6*render.DefaultMissPct/100 + 3*math.Sqrt(sqErr(b)+sqErr(a))/1e6
}

// sqErr is the squared standard error of a group's mean latency (ns²).
func sqErr(g *budget.Group) float64 {
	var ss float64
	for _, l := range g.Latencies {
		d := float64(l) - g.Latency.Mean
		ss += d * d
	}
	n := float64(len(g.Latencies))
	return ss / (n - 1) / n
}

// TestCallPathPrediction: remove=getUser, predicted from one trace, against
// a second trace in which the serial request really does not call getUser.
func TestCallPathPrediction(t *testing.T) {
	before, _ := callPathTrace(t, true)
	after, _ := callPathTrace(t, false)
	opts := budget.DefaultOptions
	for _, spec := range []string{"remove=getUser", "remove=getUser>query"} {
		p, err := budget.ParsePrediction(spec)
		if err != nil {
			t.Fatal(err)
		}
		opts.Predictions = append(opts.Predictions, p)
	}
	rb := fixture.Analyze(t, before, opts)
	ra := fixture.Analyze(t, after, budget.DefaultOptions)
	gb, ga := group(t, rb, "serial"), group(t, ra, "serial")
	measured := ga.Latency.Mean / 1e6
	for _, pr := range gb.Predictions {
		if !pr.Matched {
			t.Fatalf("%s matched no term", pr.Spec)
		}
		predicted := pr.Mean / 1e6
		tol := tolerance(gb, ga)
		if d := math.Abs(predicted - measured); d > tol {
			t.Errorf("%s: predicted %.2f ms, measured %.2f ms (before %.2f ms; tolerance %.2f ms)", pr.Spec, predicted, measured, gb.Latency.Mean/1e6, tol)
		}
		// and it removed only getUser's query: listOrders's stays.
		if predicted < ordersMs*0.98 {
			t.Errorf("%s: predicted %.2f ms, below listOrders's %d ms query", pr.Spec, predicted, ordersMs)
		}
	}
}

// TestJoinPrediction: in a WaitGroup fork (upstream 100 ms beside a 50 ms
// query), shrinking the upstream call makes the query the join's end. The
// prediction from the first trace is checked against a second trace in
// which the upstream really answered in a fifth of the time.
func TestJoinPrediction(t *testing.T) {
	cfg := demotrace.DefaultConfig
	cfg.Scenario = "waitgroup"
	before := fixture.Record(t, cfg)
	cfg.Upstream /= 5
	after := fixture.Record(t, cfg)
	opts := budget.DefaultOptions
	p, err := budget.ParsePrediction("scale=callUpstream:0.2")
	if err != nil {
		t.Fatal(err)
	}
	opts.Predictions = []budget.Prediction{p}
	gb := only(t, fixture.Analyze(t, before.Path, opts))
	ga := only(t, fixture.Analyze(t, after.Path, budget.DefaultOptions))
	predicted, measured := gb.Predictions[0].Mean/1e6, ga.Latency.Mean/1e6
	tol := tolerance(gb, ga)
	if math.Abs(predicted-measured) > tol {
		t.Errorf("scale=callUpstream:0.2: predicted %.2f ms, measured %.2f ms (before %.2f ms; tolerance %.2f ms)", predicted, measured, gb.Latency.Mean/1e6, tol)
	}
	// the query (50 ms) now ends the join: the prediction cannot be below it
	if predicted < float64(cfg.DB)/1e6 {
		t.Errorf("predicted %.2f ms, below the %v query the join waits for", predicted, cfg.DB)
	}
}
