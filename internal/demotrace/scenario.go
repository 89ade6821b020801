package demotrace

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/sticky"
)

// Scenarios lists the scenario names Record accepts, with what each does.
var Scenarios = map[string]string{
	"serial":     "cpu 1 ms → upstream HTTP 100 ms → db 50 ms → 2 ms under a shared mutex",
	"waitgroup":  "like serial, upstream and db overlapped in two goroutines joined by a sync.WaitGroup",
	"errgroup":   "like waitgroup, with golang.org/x/sync/errgroup",
	"handoff":    "cpu → db call handed to a long-lived worker goroutine over a channel → mutex",
	"contention": "cpu → 2 ms under a mutex every request contends for",
	"pool":       "cpu → db call while holding one of PoolSlots slots (buffered-channel semaphore)",
	"notasks":    "like serial, without runtime/trace tasks or regions",
}

// Config configures a recording. Zero fields take DefaultConfig's values.
type Config struct {
	Scenario   string
	Clients    int // closed-model clients
	Requests   int // measured requests (after warm-up)
	Warmup     int // requests before the trace starts
	CPU        time.Duration
	Upstream   time.Duration
	DB         time.Duration
	Locked     time.Duration
	PoolSlots  int
	CPUProfile bool // also run the CPU profiler, so the trace carries CPU samples
}

// DefaultConfig is the configuration of `latscope demo-trace`.
var DefaultConfig = Config{
	Scenario: "serial", Clients: 4, Requests: 40, Warmup: 8,
	CPU: time.Millisecond, Upstream: 100 * time.Millisecond, DB: 50 * time.Millisecond,
	Locked: 2 * time.Millisecond, PoolSlots: 2,
}

// Summary is what the load side measured during the trace.
type Summary struct {
	Requests  int
	Latencies []time.Duration // client-side, in completion order
	Wall      time.Duration   // trace window
	CPU       time.Duration   // process utime+stime over the window (getrusage)
}

// Mean returns the mean client-side latency.
func (s Summary) Mean() time.Duration {
	if len(s.Latencies) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range s.Latencies {
		sum += l
	}
	return sum / time.Duration(len(s.Latencies))
}

// WithDefaults returns c with its zero fields set from DefaultConfig: the
// configuration Record runs.
func (c Config) WithDefaults() Config {
	d := DefaultConfig
	if c.Scenario == "" {
		c.Scenario = d.Scenario
	}
	for _, p := range []struct{ v, def *int }{{&c.Clients, &d.Clients}, {&c.Requests, &d.Requests}, {&c.Warmup, &d.Warmup}, {&c.PoolSlots, &d.PoolSlots}} {
		if *p.v <= 0 {
			*p.v = *p.def
		}
	}
	for _, p := range []struct{ v, def *time.Duration }{{&c.CPU, &d.CPU}, {&c.Upstream, &d.Upstream}, {&c.DB, &d.DB}, {&c.Locked, &d.Locked}} {
		if *p.v <= 0 {
			*p.v = *p.def
		}
	}
	return c
}

// Record runs a scenario and writes the execution trace of its measured
// window (after warm-up) to w. An error writing to w is returned (the
// runtime's tracer drops them), after the run, and the trace is then
// incomplete.
func Record(ctx context.Context, w io.Writer, cfg Config) (Summary, error) {
	cfg = cfg.WithDefaults()
	if _, ok := Scenarios[cfg.Scenario]; !ok {
		return Summary{}, fmt.Errorf("unknown scenario %q (scenarios: %s)", cfg.Scenario, names())
	}
	ItersPerMs()
	srv, err := start(cfg)
	if err != nil {
		return Summary{}, err
	}
	defer srv.close()
	if err := drive(ctx, srv.url, cfg.Clients, cfg.Warmup, nil); err != nil {
		return Summary{}, fmt.Errorf("warm-up: %w", err)
	}
	if cfg.CPUProfile {
		if err := pprof.StartCPUProfile(io.Discard); err != nil {
			return Summary{}, fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := hostsig.SelfCPU()
	t0 := time.Now()
	sw := sticky.New(w)
	if err := trace.Start(sw); err != nil {
		return Summary{}, fmt.Errorf("trace: %w", err)
	}
	var s Summary
	err = drive(ctx, srv.url, cfg.Clients, cfg.Requests, &s.Latencies)
	trace.Stop() // flushes the trace to sw
	s.Wall, s.CPU, s.Requests = time.Since(t0), hostsig.SelfCPU()-cpu0, len(s.Latencies)
	if werr := sw.Err(); werr != nil {
		return s, fmt.Errorf("writing the trace: %w", werr)
	}
	return s, err
}

func names() string {
	var ns []string
	for n := range Scenarios {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return fmt.Sprint(ns)
}

// drive sends n requests from c closed-model clients.
func drive(ctx context.Context, url string, c, n int, lat *[]time.Duration) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	next := 0
	g, ctx := errgroup.WithContext(ctx)
	for range c {
		g.Go(func() error {
			for {
				mu.Lock()
				if next >= n {
					mu.Unlock()
					return nil
				}
				next++
				mu.Unlock()
				t0 := time.Now()
				if err := get(ctx, client, url); err != nil {
					return err
				}
				if lat != nil {
					mu.Lock()
					*lat = append(*lat, time.Since(t0))
					mu.Unlock()
				}
			}
		})
	}
	return g.Wait()
}

func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return nil
}

// servers are the scenario's three loopback servers.
type servers struct {
	url  string
	stop []func()
}

func (s *servers) close() {
	for i := len(s.stop) - 1; i >= 0; i-- {
		s.stop[i]()
	}
}

func start(cfg Config) (*servers, error) {
	s := &servers{}
	up, err := serveHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(cfg.Upstream)
		io.WriteString(w, "ok")
	}))
	if err != nil {
		return nil, err
	}
	s.stop = append(s.stop, up.stop)
	db, err := serveDB(cfg.DB)
	if err != nil {
		s.close()
		return nil, err
	}
	s.stop = append(s.stop, func() { db.Close() })
	e := &env{upstream: up.url, dbAddr: db.Addr().String(), cfg: cfg,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Clients}},
		worker: make(chan job), slots: make(chan struct{}, cfg.PoolSlots)}
	if cfg.Scenario == "handoff" {
		go workerLoop(e)
		s.stop = append(s.stop, func() { close(e.worker) })
	}
	svc, err := serveHTTP(handler(e))
	if err != nil {
		s.close()
		return nil, err
	}
	s.stop = append(s.stop, svc.stop, e.client.CloseIdleConnections)
	s.url = svc.url
	return s, nil
}

type httpServer struct {
	url  string
	stop func()
}

func serveHTTP(h http.Handler) (*httpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return &httpServer{url: "http://" + ln.Addr().String() + "/", stop: func() { srv.Close() }}, nil
}

// serveDB answers each line with "ok" after delay, one connection per query.
func serveDB(delay time.Duration) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
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
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					time.Sleep(delay)
					if _, err := io.WriteString(c, "ok\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln, nil
}
