package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/tier"
)

// The overhead measurement (docs/agent.md, "Overhead"):
//
//	go test ./agent/internal/e2e -run TestOverhead -overhead -v
//
// It serves a small HTTP service in this process, plain and behind the
// agent (middleware and flight recorder on), and drives it from a child
// process running the load generator, in interleaved rounds (ABBA). It
// prints requests/s at saturation and the service's CPU per request at a
// fixed 5,000 requests/s. It reports; it asserts nothing about speed.
var (
	overhead       = flag.Bool("overhead", false, "run the agent's overhead measurement (slow)")
	overheadRounds = flag.Int("overhead-rounds", 6, "rounds per variant")
	overheadSecs   = flag.Float64("overhead-seconds", 3, "seconds per round")
)

// loadEnv carries the child's load spec: URL, clients, rate, seconds.
const loadEnv = "LATSCOPE_AGENT_OVERHEAD_LOAD"

// loadResult is what the child reports.
type loadResult struct {
	OK, Errors int
	Seconds    float64
	P50, P99   time.Duration
}

// TestOverheadLoad is the child: it runs the load given in loadEnv.
func TestOverheadLoad(t *testing.T) {
	tier.Timing(t)
	spec := os.Getenv(loadEnv)
	if spec == "" {
		t.Skip("SKIP: only run as the load process of TestOverhead")
	}
	f := strings.Fields(spec)
	o := loadgen.DefaultOptions
	o.URL = f[0]
	if c, _ := strconv.Atoi(f[1]); c > 0 { // 0: the open model, which has no clients (loadgen keeps its default)
		o.Clients = c
	}
	o.Rate, _ = strconv.ParseFloat(f[2], 64)
	secs, _ := strconv.ParseFloat(f[3], 64)
	o.Duration, o.Warmup, o.MaxInFlight = time.Duration(secs*float64(time.Second)), 500*time.Millisecond, 256
	var res loadResult
	var lat []time.Duration
	err := loadgen.Run(context.Background(), o, func(r loadgen.Result) {
		switch {
		case r.Warmup:
		case r.Error != "":
			res.Errors++
		default:
			res.OK++
			lat = append(lat, r.Latency)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lat)
	res.Seconds, res.P50, res.P99 = secs, loadgen.Percentile(lat, 50), loadgen.Percentile(lat, 99)
	json.NewEncoder(os.Stdout).Encode(res)
}

// round is one measured run.
type round struct {
	loadResult
	cpu time.Duration // the service process's CPU over the run
}

func (r round) rps() float64 { return float64(r.OK) / r.Seconds }

// cpuPerRequest is the service's CPU per answered request (the child's
// warm-up requests included: they cost the service too).
func (r round) cpuPerRequest(warm float64) time.Duration {
	return time.Duration(float64(r.cpu) / (float64(r.OK) * (1 + warm/r.Seconds)))
}

// variant is one configuration of the service.
type variant struct {
	name                 string
	middleware, recorder bool
}

var variants = []variant{
	{"plain", false, false},
	{"middleware only", true, false},
	{"recorder only", false, true},
	{"agent", true, true},
}

func TestOverhead(t *testing.T) {
	tier.Timing(t)
	if !*overhead {
		t.Skip("SKIP: pass -overhead to measure the agent's overhead (about two minutes)")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello " + r.PathValue("name") + "\n"))
	})
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*handler.Load()).ServeHTTP(w, r)
	}))
	defer srv.Close()
	sampler, err := hostsig.NewSampler(os.Getpid(), hostsig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sampler.Close()
	drive := func(clients int, rate float64) round {
		before, _ := sampler.Sample()
		cmd := exec.Command(os.Args[0], "-test.run=^TestOverheadLoad$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s/hello/x %d %g %g", loadEnv, srv.URL, clients, rate, *overheadSecs))
		out, err := cmd.Output()
		after, _ := sampler.Sample()
		if err != nil {
			t.Fatalf("load process: %v: %s", err, out)
		}
		var r round
		line := out[:max(0, strings.IndexByte(string(out), '\n'))]
		if err := json.Unmarshal(line, &r.loadResult); err != nil {
			t.Fatalf("load process said %q: %v", out, err)
		}
		r.cpu = hostsig.Diff(before, after).CPU()
		return r
	}
	run := func(v variant, clients int, rate float64, cost *costSamples) round {
		var h http.Handler = mux
		if v.middleware || v.recorder {
			// no snapshot during the rounds: their cost is measured on its own
			a, err := agent.New(agent.Options{Dir: t.TempDir(), Trigger: agent.Trigger{Threshold: time.Hour}, NoRecorder: !v.recorder})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if v.middleware {
				h = a.Handler(mux)
			}
		}
		handler.Store(&h)
		var r round
		profiled(t, cost, func() { r = drive(clients, rate) })
		return r
	}
	for _, m := range []struct {
		name    string
		clients int
		rate    float64
	}{{"saturation, 16 clients", 16, 0}, {"fixed 5000 requests/s", 0, 5000}} {
		rounds := make([][]round, len(variants))
		cost := make([]costSamples, len(variants))
		for i := range *overheadRounds {
			for j := range variants {
				k := (i + j) % len(variants) // rotate which variant goes first
				rounds[k] = append(rounds[k], run(variants[k], m.clients, m.rate, &cost[k]))
			}
		}
		report(t, m.name, rounds)
		cpu := make([]float64, len(variants))
		for i := range variants {
			cpu[i] = median(rounds[i], func(r round) float64 { return float64(r.cpuPerRequest(0.5)) / 1e3 })
		}
		reportCost(t, m.name, cost, cpu)
	}
	eventsPerRequest(t, &handler, mux, func() { drive(0, 5000) })
	snapshotCost(t, sampler, &handler, mux, func() { drive(16, 0) })
}

// loadedAgent starts an agent that snapshots only when asked, puts it in
// front of mux as the service's handler and runs load. The caller closes
// it: only one flight recorder may run in a process.
func loadedAgent(t *testing.T, handler *atomic.Pointer[http.Handler], mux http.Handler, load func()) *agent.Agent {
	a, err := agent.New(agent.Options{Dir: t.TempDir(), Trigger: agent.Trigger{Threshold: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Handler(mux)
	handler.Store(&h)
	load()
	return a
}

// eventsPerRequest counts the trace events the service writes per request at
// 5,000 requests/s with the agent on: a snapshot right after one round holds
// the round (the flight recorder keeps FlightMinAge, 10 s).
func eventsPerRequest(t *testing.T, handler *atomic.Pointer[http.Handler], mux http.Handler, load func()) {
	a := loadedAgent(t, handler, mux, load)
	defer a.Close()
	path, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := agenttest.CountEvents(path, f)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tasks == 0 {
		t.Fatalf("%s: no task in the snapshot", path)
	}
	t.Logf("trace events of the service at 5000 requests/s with the agent: %.1f per request, %.1f of them with a stack (%d events, %d requests in the window)",
		float64(c.Events)/float64(c.Tasks), float64(c.Stacks)/float64(c.Tasks), c.Events, c.Tasks)
}

// snapshotCost measures one snapshot of a window filled by a saturation
// round: wall time, the process's CPU and the file's size.
func snapshotCost(t *testing.T, sampler *hostsig.Sampler, handler *atomic.Pointer[http.Handler], mux http.Handler, load func()) {
	a := loadedAgent(t, handler, mux, load)
	defer a.Close()
	before, _ := sampler.Sample()
	start := time.Now()
	path, err := a.Snapshot()
	wall := time.Since(start)
	after, _ := sampler.Sample()
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one snapshot after a saturation round: %.1f MB in %v, %v of process CPU", float64(info.Size())/1e6, wall.Round(time.Millisecond), hostsig.Diff(before, after).CPU())
}

// report logs each variant's medians against the plain service's, and the
// paired comparison: round i of a variant against round i of plain, which
// ran in the same rotation, a few seconds apart. The paired median with its
// interquartile range says how far the noise between neighbouring rounds
// reaches.
func report(t *testing.T, name string, rounds [][]round) {
	med := median
	rps := func(r round) float64 { return r.rps() }
	cpu := func(r round) float64 { return float64(r.cpuPerRequest(0.5)) / 1e3 }
	p99 := func(r round) float64 { return float64(r.P99) / 1e3 }
	t.Logf("%s, %d rounds each, medians; paired: median [interquartile range] of round-by-round against plain:", name, len(rounds[0]))
	t.Logf("  %-16s %10s %7s %12s %10s %10s %7s %24s %24s", "variant", "requests/s", "ratio", "CPU µs/req", "added µs", "p99 µs", "errors", "paired ratio", "paired added µs")
	for i, v := range variants {
		errs := 0
		ratios, added := make([]float64, len(rounds[i])), make([]float64, len(rounds[i]))
		for j, r := range rounds[i] {
			errs += r.Errors
			ratios[j] = rps(r) / rps(rounds[0][j])
			added[j] = cpu(r) - cpu(rounds[0][j])
		}
		qr, qa := quartiles(ratios), quartiles(added)
		t.Logf("  %-16s %10.0f %7.3f %12.2f %10.2f %10.0f %7d %8.3f [%.3f, %.3f] %8.2f [%+.2f, %+.2f]", v.name, med(rounds[i], rps), med(rounds[i], rps)/med(rounds[0], rps),
			med(rounds[i], cpu), med(rounds[i], cpu)-med(rounds[0], cpu), med(rounds[i], p99), errs, qr[1], qr[0], qr[2], qa[1], qa[0], qa[2])
	}
}

// median returns the median of f over rs.
func median(rs []round, f func(round) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return quartiles(xs)[1]
}

// quartiles returns the first quartile, median and third quartile of xs
// (nearest rank), reordering xs.
func quartiles(xs []float64) [3]float64 {
	if len(xs) == 0 {
		return [3]float64{}
	}
	slices.Sort(xs)
	at := func(q float64) float64 { return xs[min(len(xs)-1, int(q*float64(len(xs))))] }
	return [3]float64{at(0.25), at(0.5), at(0.75)}
}
