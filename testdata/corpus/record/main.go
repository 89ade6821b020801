// Command record records latscope's corpus of real execution traces: each
// scenario starts a service written the way teams write them, drives it
// with a closed-model client in the same process over loopback, records
// runtime/trace for a short window after warm-up, and writes NAME.trace
// and NAME.truth.json, the ground truth from the configuration and from the
// client's and the service's own timers (never from latscope).
//
//	cd testdata/corpus && go run ./record [-only NAME[,NAME]] [-out DIR]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	xtrace "golang.org/x/exp/trace"
)

// scenario is one recording.
type scenario struct {
	name    string
	what    string
	clients int
	warmup  time.Duration
	window  time.Duration
	// start starts the service and returns the client's one request, the
	// truth that the configuration alone gives, and a stop function.
	start func(t *Truth) (do func(ctx context.Context) error, stop func(), err error)
	// cpuProfile runs the CPU profiler around the trace, as latscope
	// capture does, so that the trace carries CPU samples; the profile is
	// kept as NAME.pprof.
	cpuProfile bool
	// burners starts that many CPU burners (a shell loop at nice 0; -1:
	// one per core) before the warm-up and stops them after the window.
	burners int
}

var scenarios []*scenario

func register(s *scenario) { scenarios = append(scenarios, s) }

// Truth is NAME.truth.json.
type Truth struct {
	Name     string  `json:"name"`
	What     string  `json:"what"`
	Go       string  `json:"go"`
	Recorded string  `json:"recorded"`
	Clients  int     `json:"clients"`
	WindowS  float64 `json:"window_s"`
	// Task is the request type (trace task name) latscope should report;
	// "" when the requests are inferred or not there at all.
	Task string `json:"task"`
	// Client: requests sent at or after the trace started and ended at or
	// before it stopped, cut at either end, and their latencies.
	Client Side `json:"client"`
	// Server: the service's own timer around each request (the task's
	// begin and end), the same window rule.
	Server Side `json:"server"`
	// Terms are what the configuration says each request waits for.
	Terms []TermTruth `json:"terms"`
	// Routes, for a service with several request types (routes, RPCs and
	// HTTP beside them), are the client's side per type, named as latscope
	// should group them: the client times each request under "route:NAME".
	Routes map[string]Side `json:"routes,omitempty"`
	// UncountedRPCs are the RPCs the client completed in the window that no
	// task covers (timed under "uncounted"): latscope must say they ran
	// outside every request counted.
	UncountedRPCs int `json:"uncounted_rpcs,omitempty"`
	// ServerRoutes are the service's own timer per request type, around
	// the outermost handler (the server writes under "serverroute:NAME"),
	// where a service without tasks has one.
	ServerRoutes map[string]Side `json:"server_routes,omitempty"`
	// Service are the service's own counters over the window.
	Service map[string]float64 `json:"service,omitempty"`
	// Gaps are behaviours of today's analyser known to be wrong on this
	// trace: the truth stands, the test logs the gap.
	Gaps []Gap `json:"gaps,omitempty"`
	// ClientAllowanceMS, when set, is what the server cannot see of the
	// client's latency (a new connection's dial and handshake), allowed
	// beside 3 % when latscope's p50 and p99 are checked against the
	// client's; Note says why.
	ClientAllowanceMS float64 `json:"client_allowance_ms,omitempty"`
	// ClientP99Note, when set, says why latscope's p99 is checked against
	// the service's timer only, the client's logged.
	ClientP99Note string `json:"client_p99_note,omitempty"`
	Note          string `json:"note,omitempty"`
	// CPUProfile is the CPU profile taken around the trace (NAME.pprof),
	// when the scenario ran one; Burners the CPU burners beside the
	// service.
	CPUProfile string `json:"cpu_profile,omitempty"`
	Burners    int    `json:"burners,omitempty"`
	// Load is the host's load average (1 min) before and after.
	Load [2]float64 `json:"load,omitempty"`
}

// Side is one side's count and latencies over the window.
type Side struct {
	Requests    int     `json:"requests"`
	BeganBefore int     `json:"began_before"`
	NotEnded    int     `json:"not_ended"`
	Errors      int     `json:"errors,omitempty"`
	MeanMS      float64 `json:"mean_ms"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms"`
}

// TermTruth is one wait each request makes: the application frame beneath
// it, its kind, the configured cost, and what the service's own timer
// measured around it (mean per request over the window).
type TermTruth struct {
	Frame        string  `json:"frame"`
	Kind         string  `json:"kind"`
	ConfiguredMS float64 `json:"configured_ms,omitempty"` // 0: no configured cost (a queue wait)
	MeasuredMS   float64 `json:"measured_ms"`
	Timer        string  `json:"timer"` // the timer's name in the service
	// Times is how many times a request runs the timed code (0: once);
	// measured_ms is Times × the timer's mean.
	Times int `json:"times,omitempty"`
	// Critical says the term must be on the critical path (false for a
	// branch of a fork that a longer branch hides).
	Critical bool `json:"critical"`
	// Beneath, for a wait explained by another goroutine (a worker, a
	// batcher, a transport's reader), is the kind of what that goroutine
	// was doing meanwhile, as configured: most of the term's critical time
	// must be that.
	Beneath string `json:"beneath,omitempty"`
	// BeneathFrame, for such a wait, is the application frame the root
	// cause blocked under, on the goroutine at the end of the chain of
	// hand-offs (the WAL's sync beneath an apply queue, say).
	BeneathFrame string `json:"beneath_frame,omitempty"`
	Note         string `json:"note,omitempty"`
}

// Gap is a known analyser gap.
type Gap struct {
	Issue string `json:"issue"`
	// Term is the frame whose term assertion the gap turns into a log
	// line; "" for a gap of the whole trace (no requests) or of CPU.
	Term string `json:"term,omitempty"`
	Text string `json:"text"`
}

// ---- timers: every recorded interval, kept with its begin and end ----

type interval struct {
	begin, end time.Time
	err        bool
}

// timers keep intervals without a lock on the way: a timer is made once
// (during warm-up) and its intervals go into a fixed array by an atomic
// index, so the instrument adds no wait of its own to the trace.
type timers struct {
	mu sync.Mutex
	m  sync.Map // name → *timer
}

type timer struct {
	n  atomic.Int64
	iv []interval
}

const timerCap = 1 << 16

var svc = &timers{}

func (t *timers) timer(name string) *timer {
	if x, ok := t.m.Load(name); ok {
		return x.(*timer)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	x, _ := t.m.LoadOrStore(name, &timer{iv: make([]interval, timerCap)})
	return x.(*timer)
}

func (t *timers) add(name string, x interval) {
	tm := t.timer(name)
	if i := tm.n.Add(1) - 1; i < timerCap {
		tm.iv[i] = x
	}
}

// since records a named interval that began at begin and ends now.
func (t *timers) since(name string, begin time.Time) {
	t.add(name, interval{begin: begin, end: time.Now()})
}

func (t *timers) reset() { t.m.Clear() }

// get returns a timer's intervals (after the clients have stopped).
func (t *timers) get(name string) []interval {
	x, ok := t.m.Load(name)
	if !ok {
		return nil
	}
	tm := x.(*timer)
	return slices.Clone(tm.iv[:min(tm.n.Load(), timerCap)])
}

// side summarises intervals over the window [from, to].
func side(iv []interval, from, to time.Time) Side {
	var s Side
	var lat []float64
	for _, x := range iv {
		switch {
		case x.begin.Before(from) && x.end.After(from):
			s.BeganBefore++
		case !x.begin.Before(from) && x.end.After(to) && x.begin.Before(to):
			s.NotEnded++
		case !x.begin.Before(from) && !x.end.After(to):
			if x.err {
				s.Errors++
				continue
			}
			s.Requests++
			lat = append(lat, float64(x.end.Sub(x.begin))/1e6)
		}
	}
	s.MeanMS, s.P50MS, s.P99MS = stats(lat)
	return s
}

// stats returns the mean and the nearest-rank p50 and p99 (ms, 3 decimals).
func stats(v []float64) (mean, p50, p99 float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	sort.Float64s(v)
	var sum float64
	for _, x := range v {
		sum += x
	}
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(v)))) - 1
		return v[max(i, 0)]
	}
	return round3(sum / float64(len(v))), round3(rank(0.50)), round3(rank(0.99))
}

// meanIn is the mean (ms) of the intervals that lie inside [from, to].
func meanIn(iv []interval, from, to time.Time) (float64, int) {
	var sum float64
	n := 0
	for _, x := range iv {
		if !x.begin.Before(from) && !x.end.After(to) {
			sum += float64(x.end.Sub(x.begin)) / 1e6
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return round3(sum / float64(n)), n
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// ---- the closed-model client ----

// maxPerClient bounds the load in count as the window bounds it in time.
const maxPerClient = 20000

// drive runs n clients, each sending its next request when the last one
// ended, until ctx ends or it has sent maxPerClient; every request is
// recorded as "client".
func drive(ctx context.Context, n int, do func(context.Context) error) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && i < maxPerClient; i++ {
				begin := time.Now()
				err := do(ctx)
				end := time.Now()
				if ctx.Err() != nil {
					return
				}
				svc.add("client", interval{begin: begin, end: end, err: err != nil})
				if err != nil {
					log.Printf("client: %v", err)
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	return &wg
}

// ---- the task per request, as services make it ----

// task begins a trace task for one request and records the service's
// "server" timer around it.
func task(ctx context.Context, name string) (context.Context, func()) {
	begin := time.Now()
	ctx, t := trace.NewTask(ctx, name)
	return ctx, func() {
		t.End()
		svc.since("server", begin)
	}
}

func record(s *scenario, dir string) error {
	svc.reset()
	t := &Truth{Name: s.name, What: s.what, Go: runtime.Version(), Clients: s.clients,
		Recorded: time.Now().UTC().Format(time.RFC3339)}
	do, stop, err := s.start(t)
	if err != nil {
		return err
	}
	defer stop()
	t.Load[0] = loadAvg()
	stopBurners, err := startBurners(s.burners)
	if err != nil {
		return err
	}
	defer stopBurners()
	if s.burners != 0 {
		t.Burners = burnerCount(s.burners)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wg := drive(ctx, s.clients, do)
	time.Sleep(s.warmup)
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	if atStart != nil {
		atStart()
		atStart = nil
	}
	var prof bytes.Buffer
	if s.cpuProfile {
		profileFrom = time.Now()
		if err := pprof.StartCPUProfile(&prof); err != nil {
			cancel()
			return err
		}
	}
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		cancel()
		return err
	}
	time.Sleep(s.window)
	trace.Stop()
	if s.cpuProfile {
		pprof.StopCPUProfile()
		profileTo = time.Now()
		t.CPUProfile = s.name + ".pprof"
	}
	if atStop != nil {
		atStop()
		atStop = nil
	}
	runtime.ReadMemStats(&ms1)
	time.Sleep(100 * time.Millisecond) // requests in flight at the stop end, so they count as not ended
	cancel()
	wg.Wait()
	stopBurners()
	t.Load[1] = loadAvg()

	// The window is the trace's own: its first and last events, in wall
	// time from its clock snapshot (docs/accuracy.md), as the service's
	// and the client's timers are.
	from, to, err := window(buf.Bytes())
	if err != nil {
		return err
	}
	t.WindowS = round3(to.Sub(from).Seconds())
	t.Client = side(svc.get("client"), from, to)
	t.Server = side(svc.get("server"), from, to)
	if iv := svc.get("uncounted"); len(iv) > 0 {
		t.UncountedRPCs = side(iv, from, to).Requests
	}
	var routes []string
	svc.m.Range(func(k, _ any) bool {
		if n, ok := strings.CutPrefix(k.(string), "route:"); ok {
			routes = append(routes, n)
		}
		return true
	})
	for _, n := range routes {
		if t.Routes == nil {
			t.Routes = map[string]Side{}
		}
		t.Routes[n] = side(svc.get("route:"+n), from, to)
		if iv := svc.get("serverroute:" + n); len(iv) > 0 {
			if t.ServerRoutes == nil {
				t.ServerRoutes = map[string]Side{}
			}
			t.ServerRoutes[n] = side(iv, from, to)
		}
	}
	for i := range t.Terms {
		tt := &t.Terms[i]
		if tt.Timer != "" {
			tt.MeasuredMS, _ = meanIn(svc.get(tt.Timer), from, to)
			if tt.Times > 0 {
				tt.MeasuredMS = round3(tt.MeasuredMS * float64(tt.Times))
			}
		}
	}
	if t.Service == nil {
		t.Service = map[string]float64{}
	}
	t.Service["gc_cycles"] = float64(ms1.NumGC - ms0.NumGC)
	t.Service["gc_pause_ms"] = round3(float64(ms1.PauseTotalNs-ms0.PauseTotalNs) / 1e6)
	t.Service["alloc_mb"] = round3(float64(ms1.TotalAlloc-ms0.TotalAlloc) / 1e6)
	if post != nil {
		post(t, from, to)
		post = nil
	}
	if err := os.WriteFile(filepath.Join(dir, s.name+".trace"), buf.Bytes(), 0o644); err != nil {
		return err
	}
	if s.cpuProfile {
		if err := os.WriteFile(filepath.Join(dir, t.CPUProfile), prof.Bytes(), 0o644); err != nil {
			return err
		}
	}
	b, _ := json.MarshalIndent(t, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, s.name+".truth.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	log.Printf("%-18s %7d bytes  client %d (p50 %.2f p99 %.2f ms)  server %d (p50 %.2f p99 %.2f ms)",
		s.name, buf.Len(), t.Client.Requests, t.Client.P50MS, t.Client.P99MS, t.Server.Requests, t.Server.P50MS, t.Server.P99MS)
	return nil
}

// window returns the trace's first and last events in wall-clock time.
func window(b []byte) (from, to time.Time, err error) {
	r, err := xtrace.NewReader(bytes.NewReader(b))
	if err != nil {
		return from, to, err
	}
	var first, last, snapTrace xtrace.Time
	var snapWall time.Time
	n := 0
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return from, to, err
		}
		if n == 0 {
			first = ev.Time()
		}
		n++
		last = max(last, ev.Time())
		if ev.Kind() == xtrace.EventSync && snapWall.IsZero() {
			if cs := ev.Sync().ClockSnapshot; cs != nil {
				snapTrace, snapWall = cs.Trace, cs.Wall
			}
		}
	}
	if snapWall.IsZero() {
		return from, to, errors.New("the trace has no clock snapshot")
	}
	return snapWall.Add(-snapTrace.Sub(first)), snapWall.Add(last.Sub(snapTrace)), nil
}

// post, when a scenario sets it, adds the service's counters over the
// window to the truth after the recording.
var post func(t *Truth, from, to time.Time)

// profileFrom and profileTo are when the CPU profile of a scenario that
// runs one started and stopped.
var profileFrom, profileTo time.Time

// burnerCount is how many burners n asks for (-1: one per core).
func burnerCount(n int) int {
	if n < 0 {
		return runtime.NumCPU()
	}
	return n
}

// startBurners starts n CPU burners, each a shell loop at nice 0 (the
// recorder itself may run at a raised priority, which children inherit),
// and returns what stops them; n -1 starts one per core.
func startBurners(n int) (func(), error) {
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
		cmds = nil
	}
	for range burnerCount(n) {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, c.Process.Pid, 0); err != nil {
			stop()
			return nil, err
		}
	}
	return stop, nil
}

// loadAvg is the host's load average over the last minute.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var v float64
	fmt.Sscanf(string(b), "%f", &v)
	return v
}

// atStart and atStop, when a scenario sets them, read the service's
// counters just before the trace starts and just after it stops.
var atStart, atStop func()

func main() {
	only := flag.String("only", "", "record only these scenarios (comma-separated)")
	dir := flag.String("out", ".", "directory to write NAME.trace and NAME.truth.json")
	list := flag.Bool("list", false, "list the scenarios")
	flag.Parse()
	log.SetFlags(0)
	if *list {
		for _, s := range scenarios {
			fmt.Printf("%-18s %s\n", s.name, s.what)
		}
		return
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n != "" {
			want[n] = true
		}
	}
	for n := range want {
		if !slices.ContainsFunc(scenarios, func(s *scenario) bool { return s.name == n }) {
			log.Fatalf("no scenario %q (-list lists them)", n)
		}
	}
	for _, s := range scenarios {
		if len(want) > 0 && !want[s.name] {
			continue
		}
		if err := record(s, *dir); err != nil {
			log.Fatalf("%s: %v", s.name, err)
		}
	}
}
