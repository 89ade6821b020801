package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/trace"
	"strconv"
	"sync"
	"time"

	"github.com/latscope/latscope/hostsig"
	"github.com/latscope/latscope/internal/tracelog"
)

// Log categories of what the agent writes into the trace (trace.Log). Their
// message formats are documented in docs/agent.md.
const (
	// SQLLogCategory: inside each query's region, the traceparent sent in
	// the statement's SQL comment ("00-<trace>-<span>-<flags>").
	SQLLogCategory = tracelog.SQL
	// SQLEndLogCategory: where a pgx query ended (QueryTracer), on any
	// goroutine, in the query's task: "traceparent=00-… duration_ns=N".
	SQLEndLogCategory = tracelog.SQLEnd
	// HTTPLogCategory: inside each outbound call's region, the traceparent
	// sent in its traceparent header.
	HTTPLogCategory = tracelog.HTTP
	// CPULogCategory: the process CPU time (utime+stime) in decimal seconds,
	// outside any task.
	CPULogCategory = tracelog.CPU
	// SlowLogCategory: inside a slow request's task, just before it ends,
	// why it triggered a snapshot (route, latency_ns, threshold_ns,
	// traceparent).
	SlowLogCategory = tracelog.Slow
	// ModuleLogCategory: outside any task, at most every 500 ms (with the
	// host samples), the service's main module path from
	// runtime/debug.ReadBuildInfo: the analysers take that module's code to
	// be the application.
	ModuleLogCategory = tracelog.Module
)

// Region names of the agent's regions.
const (
	// SQLRegion is the region of one query.
	SQLRegion = tracelog.SQLRegion
	// HTTPRegionPrefix starts the region of one outbound call; the host
	// follows ("http upstream:8080").
	HTTPRegionPrefix = tracelog.HTTPRegionPrefix
)

// Agent is the running agent of one service: the flight recorder, the host
// sampler and the optional endpoints. Its methods are safe for concurrent use.
type Agent struct {
	opts   Options
	slow   *slowness
	rec    *recorder // nil with NoRecorder
	sample *sampler
	manual *bucket // rate limit of window copies asked over the endpoints

	stop   context.CancelFunc
	wg     sync.WaitGroup
	srv    *http.Server
	addr   string
	closed sync.Once
}

// New starts an agent: the flight recorder (unless opts.NoRecorder), host
// sampling into the trace, and the endpoints when opts.Listen is set.
func New(opts Options) (*Agent, error) {
	o := opts.withDefaults()
	if err := checkListen(o.Listen, o.Token); err != nil {
		return nil, err
	}
	a := &Agent{opts: o, slow: newSlowness(o.Trigger), sample: newSampler(), manual: newBucket(o.ManualInterval, o.ManualBurst)}
	ctx, stop := context.WithCancel(context.Background())
	a.stop = stop
	if !o.NoRecorder {
		rec, err := startRecorder(o, a.sample.log)
		if err != nil {
			stop()
			return nil, err
		}
		a.rec = rec
		a.wg.Add(1)
		go func() { defer a.wg.Done(); a.sample.loop(ctx, o.SampleInterval) }()
	}
	if o.Listen != "" {
		if err := a.listen(o.Listen); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// Addr returns the address the endpoints listen on ("" without Listen).
func (a *Agent) Addr() string { return a.addr }

// Dir returns the snapshot directory.
func (a *Agent) Dir() string { return a.opts.Dir }

// Close stops the endpoints, waits for snapshots being written and stops the
// flight recorder. It is safe to call more than once.
func (a *Agent) Close() error {
	var err error
	a.closed.Do(func() {
		if a.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = a.srv.Shutdown(ctx)
			cancel()
		}
		a.stop()
		a.wg.Wait()
		if a.rec != nil {
			a.rec.close()
		}
		a.sample.close()
	})
	return err
}

// checkListen refuses to serve traces beyond loopback without a token.
func checkListen(addr, token string) error {
	if addr == "" || token != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("agent: Listen %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("agent: Listen %q is not a loopback address; traces show function names and logged values, so set Token to serve them there", addr)
	}
	return nil
}

// listen serves Endpoints on addr.
func (a *Agent) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("agent: Listen: %w", err)
	}
	a.addr = ln.Addr().String()
	a.srv = &http.Server{Handler: a.Endpoints(), ReadHeaderTimeout: 10 * time.Second}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "latscope agent: endpoints on %s: %v\n", a.addr, err)
		}
	}()
	return nil
}

// sampler writes host samples, the CPU counter and the main module into
// the trace. A nil hostsig.Sampler (no /proc) logs only the module.
type sampler struct {
	mu     sync.Mutex
	s      *hostsig.Sampler
	module string    // main module path; "" when the binary has none
	logged time.Time // when the module was last logged
}

func newSampler() *sampler {
	m := mainModule()
	s, err := hostsig.NewSampler(os.Getpid(), hostsig.Options{})
	if err != nil {
		return &sampler{module: m} // no /proc: no host samples
	}
	return &sampler{s: s, module: m}
}

// mainModule returns the binary's main module path, or "" when it has
// none (a binary built from files, "command-line-arguments").
func mainModule() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path == "" || bi.Main.Path == "command-line-arguments" {
		return ""
	}
	return bi.Main.Path
}

// log takes one sample and writes it into the trace, outside any task: the
// host sample under hostsig.LogCategory and utime+stime under
// CPULogCategory; and, at most every tracelog.ModuleEvery, the main module
// under ModuleLogCategory, which tells the analysers whose code is the
// application (so that every flight-recorder window holds it near its start).
func (s *sampler) log() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !trace.IsEnabled() {
		return
	}
	if now := time.Now(); s.module != "" && now.Sub(s.logged) >= tracelog.ModuleEvery {
		trace.Log(context.Background(), ModuleLogCategory, s.module)
		s.logged = now
	}
	if s.s == nil {
		return
	}
	smp, err := s.s.Sample()
	if err != nil {
		return
	}
	if text, err := smp.MarshalText(); err == nil {
		trace.Log(context.Background(), hostsig.LogCategory, string(text))
	}
	trace.Log(context.Background(), CPULogCategory, FormatCPUSeconds(smp.CPU()))
}

// loop logs a sample every interval until ctx is done.
func (s *sampler) loop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.log()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *sampler) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s != nil {
		s.s.Close()
		s.s = nil
	}
}

// FormatCPUSeconds formats a CPU time as the message of a CPULogCategory
// log: decimal seconds, as short as exact ("12.34").
func FormatCPUSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// ParseCPUSeconds parses the message of a CPULogCategory log.
func ParseCPUSeconds(msg string) (time.Duration, error) {
	f, err := strconv.ParseFloat(msg, 64)
	if err != nil || !(f >= 0 && f <= 1e9) { // also refuses NaN
		return 0, fmt.Errorf("agent: %s log %q: want non-negative decimal seconds", CPULogCategory, msg)
	}
	return time.Duration(f*1e9 + 0.5), nil
}
