package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/kept"
	"github.com/latscope/latscope/internal/quantile"
	"github.com/latscope/latscope/internal/render"
)

// instanceTrace is a snapshot written by a real agent.
type instanceTrace struct {
	instance string
	sleep    time.Duration
	path     string
}

// snapshotsOfInstances returns the kept snapshots of two "instances"
// (testdata/many; kept.File, LATSCOPE_RETRACE=1 records them again): one
// real agent after another in this process, each a different
// Options.Instance serving GET /work (sleeping a different time) and
// GET /fast through agent.Handler on loopback, the second three times
// slower on /work.
func snapshotsOfInstances(t *testing.T) (string, []instanceTrace) {
	t.Helper()
	insts := []instanceTrace{{instance: "web-a", sleep: 2 * time.Millisecond}, {instance: "web-b", sleep: 6 * time.Millisecond}}
	for i := range insts {
		in := insts[i]
		insts[i].path = kept.File(t, filepath.Join("many", in.instance+".trace"), func(w io.Writer) error {
			path, err := snapshotOf(t.TempDir(), in.instance, in.sleep, 60)
			if err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(w, f)
			return err
		})
	}
	return filepath.Join("testdata", "many"), insts
}

// TestMany runs the checks of the aggregate over the snapshots of two
// real instances, recorded once.
func TestMany(t *testing.T) {
	dir, insts := snapshotsOfInstances(t)
	t.Run("instances", func(t *testing.T) { testManyInstances(t, dir, insts) })
	t.Run("sketch", func(t *testing.T) { testManySketch(t, insts) })
	t.Run("same instance twice", func(t *testing.T) { testManySameInstanceTwice(t, insts) })
	t.Run("memory bounded", func(t *testing.T) { testManyMemoryBounded(t, insts) })
}

// snapshotOf runs an agent of the named instance, serves n requests of
// GET /work (each sleeping sleep) and n/2 of GET /fast, and returns its
// snapshot's path.
func snapshotOf(dir, instance string, sleep time.Duration, n int) (string, error) {
	a, err := agent.New(agent.Options{Dir: dir, Instance: instance, SampleInterval: 50 * time.Millisecond})
	if err != nil {
		return "", err
	}
	defer a.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) { time.Sleep(sleep); io.WriteString(w, "ok") })
	mux.HandleFunc("GET /fast", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(a.Handler(mux))
	defer srv.Close()
	for i := range n + n/2 {
		route := "/work"
		if i%3 == 2 {
			route = "/fast"
		}
		resp, err := http.Get(srv.URL + route)
		if err != nil {
			return "", err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	time.Sleep(20 * time.Millisecond) // let the last request's task end in the window
	return a.Snapshot()
}

// testManyInstances: two instances' snapshots aggregated from their
// directory give, per instance, the numbers of each trace analysed alone,
// and over both, the exact percentiles of all the requests.
func testManyInstances(t *testing.T, dir string, insts []instanceTrace) {
	files, err := Inputs([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{insts[0].path, insts[1].path}; !slices.Equal(files, want) {
		t.Fatalf("Inputs(%s) = %v, want %v", dir, files, want)
	}
	m, err := Many(context.Background(), files, manyOpts())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Instances, []string{"web-a", "web-b"}) {
		t.Fatalf("instances %v, want web-a, web-b", m.Instances)
	}
	for i, tr := range m.Traces {
		if tr.Instance != insts[i].instance || tr.InstanceFrom != "log" {
			t.Errorf("trace %d: instance %q from %s, want %q from the log", i, tr.Instance, tr.InstanceFrom, insts[i].instance)
		}
	}
	singles := make([]*Report, len(insts))
	for i, it := range insts {
		if singles[i], err = File(context.Background(), it.path, Options{Budget: budget.DefaultOptions, Report: render.Inputs{File: it.path, CPUSeconds: -1}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, route := range []string{"GET /work", "GET /fast"} {
		checkAggregate(t, m, route, singles)
	}
	work := manyGroup(t, m, "GET /work")
	a, b := work.Instances[0].Mean.Std(), work.Instances[1].Mean.Std()
	if a < insts[0].sleep || b < insts[1].sleep || b < a+2*time.Millisecond {
		t.Errorf("GET /work mean latency web-a %v, web-b %v: want at least %v and %v, web-b slower", a, b, insts[0].sleep, insts[1].sleep)
	}
	for _, r := range work.Instances {
		if r.TopTerm != "pipeline.snapshotOf.func1" { // the handler, in time.Sleep
			t.Errorf("GET /work %s: top term %q, want the handler", r.Instance, r.TopTerm)
		}
	}
	var text, js bytes.Buffer
	if err := m.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 traces from 2 instances (web-a, web-b)", "GET /work:", "per instance", "web-b"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var back render.Many
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Groups) != len(m.Groups) || back.Groups[0].Instances[0].Requests != m.Groups[0].Instances[0].Requests {
		t.Errorf("JSON does not round-trip (%v):\n%s", err, js.String())
	}
	t.Logf("\n%s", text.String())
}

func manyOpts() ManyOptions {
	return ManyOptions{Budget: budget.DefaultOptions, Report: render.Inputs{CPUSeconds: -1}}
}

func manyGroup(t *testing.T, m *render.Many, name string) render.ManyGroup {
	t.Helper()
	for _, g := range m.Groups {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no request type %q in the aggregate", name)
	return render.ManyGroup{}
}

// checkAggregate checks route's aggregate against the traces analysed
// alone: per instance the count, mean, max and top term; over all, the
// count and the exact percentiles of every latency.
func checkAggregate(t *testing.T, m *render.Many, route string, singles []*Report) {
	t.Helper()
	g := manyGroup(t, m, route)
	var all []int64
	count := 0
	for i, s := range singles {
		var sg *budget.Group
		for _, x := range s.Result.Groups {
			if x.Name == route {
				sg = x
			}
		}
		var rg *render.Group
		for j := range s.Report.Groups {
			if s.Report.Groups[j].Name == route {
				rg = &s.Report.Groups[j]
			}
		}
		if sg == nil || rg == nil || sg.Count == 0 {
			t.Fatalf("%s: trace %d has no %s requests", route, i, route)
		}
		row := g.Instances[i]
		if row.Requests != sg.Count || row.Traces != 1 {
			t.Errorf("%s %s: %d requests in %d traces, want %d in 1", route, row.Instance, row.Requests, row.Traces, sg.Count)
		}
		if d := math.Abs(float64(row.Mean - rg.Requests.Mean)); d > 1 {
			t.Errorf("%s %s: mean %v, alone %v", route, row.Instance, row.Mean.Std(), rg.Requests.Mean.Std())
		}
		if row.Max != rg.Requests.Max || row.P99 != rg.Requests.P99 {
			t.Errorf("%s %s: p99 %v max %v, alone %v %v", route, row.Instance, row.P99.Std(), row.Max.Std(), rg.Requests.P99.Std(), rg.Requests.Max.Std())
		}
		if len(rg.Terms) > 0 {
			top := rg.Terms[0]
			if row.TopTerm != top.Name || math.Abs(float64(row.TopCritical-top.Critical)) > 1 {
				t.Errorf("%s %s: top term %q %v, alone %q %v", route, row.Instance, row.TopTerm, row.TopCritical.Std(), top.Name, top.Critical.Std())
			}
		}
		all = append(all, sg.Latencies...)
		count += sg.Count
	}
	slices.Sort(all)
	q := g.Requests
	if q.Count != count || q.Estimated {
		t.Errorf("%s: %d requests (estimated %v), want %d exact", route, q.Count, q.Estimated, count)
	}
	for _, p := range []struct {
		got Duration
		q   float64
	}{{q.Min, 0}, {q.P50, 0.5}, {q.P90, 0.9}, {q.P99, 0.99}, {q.Max, 1}} {
		if want := quantile.Sorted(all, p.q); int64(p.got) != want {
			t.Errorf("%s: q%v %v, want %v (both traces' latencies)", route, p.q, time.Duration(p.got), time.Duration(want))
		}
	}
}

// Duration is render.Duration, for the tables above.
type Duration = render.Duration

// testManySketch: with fewer latencies kept than requests, the
// percentiles come from the sketch, within its accuracy, and a finding
// says so.
func testManySketch(t *testing.T, insts []instanceTrace) {
	files := []string{insts[0].path, insts[1].path}
	exact, err := Many(context.Background(), files, manyOpts())
	if err != nil {
		t.Fatal(err)
	}
	o := manyOpts()
	o.Many.MaxExact = 10
	est, err := Many(context.Background(), files, o)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range est.Groups {
		x := exact.Groups[i].Requests
		if !g.Requests.Estimated || g.Requests.Count != x.Count || g.Requests.Mean != x.Mean || g.Requests.Min != x.Min || g.Requests.Max != x.Max {
			t.Errorf("%s: %+v, want estimated with the exact count, mean, min and max of %+v", g.Name, g.Requests, x)
		}
		pairs := [][2]Duration{{g.Requests.P50, x.P50}, {g.Requests.P90, x.P90}, {g.Requests.P99, x.P99}}
		for j, r := range g.Instances {
			pairs = append(pairs, [2]Duration{r.P99, exact.Groups[i].Instances[j].P99})
		}
		for _, p := range pairs {
			if math.Abs(float64(p[0]-p[1])) > render.EstimateRelErr*float64(p[1])+1 {
				t.Errorf("%s: estimate %v, exact %v: beyond %v", g.Name, p[0].Std(), p[1].Std(), render.EstimateRelErr)
			}
		}
	}
	if !hasFinding(est.Findings, "percentiles-estimated") || hasFinding(exact.Findings, "percentiles-estimated") {
		t.Errorf("want a percentiles-estimated finding with MaxExact 10 only: %v / %v", est.Findings, exact.Findings)
	}
}

func hasFinding(fs []render.Finding, kind string) bool {
	return slices.ContainsFunc(fs, func(f render.Finding) bool { return f.Kind == kind })
}

// testManySameInstanceTwice: one instance's traces add up in its row, and
// overlapping windows are a finding.
func testManySameInstanceTwice(t *testing.T, insts []instanceTrace) {
	files := []string{insts[0].path, insts[0].path}
	m, err := Many(context.Background(), files, manyOpts())
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Many(context.Background(), files[:1], manyOpts())
	if err != nil {
		t.Fatal(err)
	}
	g, g1 := manyGroup(t, m, "GET /work"), manyGroup(t, alone, "GET /work")
	if len(g.Instances) != 1 || g.Instances[0].Traces != 2 || g.Requests.Count != 2*g1.Requests.Count || g.Requests.Mean != g1.Requests.Mean {
		t.Errorf("twice: %+v, want one instance of 2 traces, twice the requests of %+v", g, g1)
	}
	if !hasFinding(m.Findings, "windows-overlap") {
		t.Errorf("want a windows-overlap finding: %v", m.Findings)
	}
}

// TestInputs: a directory gives its traces in name order; an empty one,
// or one without traces, is one error naming it.
func TestInputs(t *testing.T) {
	empty, other, some := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o600)
	for _, n := range []string{"b.trace", "a.trace", ".latscope-x.tmp", "c.txt"} {
		os.WriteFile(filepath.Join(some, n), nil, 0o600)
	}
	os.Mkdir(filepath.Join(some, "sub.trace"), 0o700)
	tests := []struct {
		args    []string
		want    []string
		wantErr string
	}{
		{[]string{empty}, nil, empty + " is a directory, not a trace file, and holds no *.trace file"},
		{[]string{other}, nil, other + " is a directory, not a trace file, and holds no *.trace file"},
		{[]string{some, "x.trace"}, []string{filepath.Join(some, "a.trace"), filepath.Join(some, "b.trace"), "x.trace"}, ""},
	}
	for _, tt := range tests {
		got, err := Inputs(tt.args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Inputs(%v) error %v, want one line with %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Inputs(%v) = %v, %v; want %v", tt.args, got, err, tt.want)
		}
	}
}

// testManyMemoryBounded: aggregating many traces holds the aggregate, not
// the traces: the live heap after the tenth trace is within a small bound
// of the heap after the second, while one trace's analysis takes far more.
func testManyMemoryBounded(t *testing.T, insts []instanceTrace) {
	const n = 10
	files := slices.Repeat([]string{insts[1].path}, n)
	heap := make([]uint64, n)
	o := manyOpts()
	o.afterTrace = func(i int) { heap[i] = liveHeap() }
	before := liveHeap()
	m, err := Many(context.Background(), files, o)
	if err != nil {
		t.Fatal(err)
	}
	one, err := File(context.Background(), insts[1].path, Options{Budget: budget.DefaultOptions, Report: render.Inputs{CPUSeconds: -1}})
	if err != nil {
		t.Fatal(err)
	}
	withOne := liveHeap()
	runtime.KeepAlive(one)
	runtime.KeepAlive(m)
	perTrace := int64(withOne) - int64(heap[n-1]) // one analysis kept alive
	growth := int64(heap[n-1]) - int64(heap[1])
	t.Logf("live heap: before %d KiB, after 2 traces %d KiB, after %d %d KiB; one trace's analysis %d KiB", before>>10, heap[1]>>10, n, heap[n-1]>>10, perTrace>>10)
	// Keeping every trace's analysis would grow the heap by n-2 of them.
	if growth > perTrace || growth > 512<<10 {
		t.Errorf("the live heap grew %d KiB over %d more traces, want less than one trace's analysis (%d KiB) in all, and 512 KiB", growth>>10, n-2, perTrace>>10)
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
