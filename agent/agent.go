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
	"sync"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/hostsig/probe"
	"github.com/latscope/latscope/tracelog"
)

// Agent is the running agent of one service: the flight recorder, the host
// sampler and the optional endpoints. Its methods are safe for concurrent use.
type Agent struct {
	opts   Options
	slow   *slowness
	rec    *recorder // nil with NoRecorder
	sample *sampler
	manual *bucket   // rate limit of window copies asked over the endpoints
	met    *metrics  // nil without Options.Metrics
	routes *routeSet // Options.MaxRoutes

	stop   context.CancelFunc
	wg     sync.WaitGroup
	srv    *http.Server
	addr   string
	closed sync.Once
}

// New starts an agent: the flight recorder (unless opts.NoRecorder), host
// sampling into the trace, the metrics when opts.Metrics is set, and the
// endpoints when opts.Listen is set.
func New(opts Options) (*Agent, error) {
	o := opts.withDefaults()
	if err := checkListen(o.Listen, o.Token); err != nil {
		return nil, err
	}
	a := &Agent{opts: o, slow: newSlowness(o.Trigger), sample: newSampler(o.Module, o.Instance, o.SampleInterval), manual: newBucket(o.ManualInterval, o.ManualBurst)}
	ctx, stop := context.WithCancel(context.Background())
	a.stop = stop
	probeOn := o.ProbeEvery > 0 && (!o.NoRecorder || o.Metrics != nil)
	m, err := openMetrics(o.Metrics, probeOn)
	if err != nil {
		stop()
		a.sample.close()
		return nil, err
	}
	a.met = m
	var over func()
	if a.met != nil {
		over = a.met.m.RouteOverLimit
	}
	a.routes = newRouteSet(o.MaxRoutes, over, os.Stderr)
	if !o.NoRecorder {
		rec, err := startRecorder(o, a.sample.log)
		if err != nil {
			stop()
			a.sample.close()
			if a.met != nil {
				a.met.m.Close()
			}
			return nil, err
		}
		a.rec = rec
		a.wg.Add(1)
		go func() { defer a.wg.Done(); a.sample.loop(ctx, o.SampleInterval) }()
	} else if a.sample.module != "" || a.sample.instance != "" {
		// No recorder, but the service may trace itself (net/http/pprof,
		// runtime/trace.Start): name the module in those traces too.
		a.wg.Add(1)
		go func() { defer a.wg.Done(); a.sample.moduleLoop(ctx) }()
	}
	if probeOn {
		var onWake func(time.Duration)
		if a.met != nil {
			onWake = a.met.wake
		}
		a.wg.Add(1)
		go func() { defer a.wg.Done(); probe.RunFunc(ctx, o.ProbeEvery, tracelog.ProbeLate, onWake) }()
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
		if a.met != nil {
			a.met.m.Close()
		}
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

// listen serves Endpoints on addr, with the connection limits of Options
// (ListenIdleTimeout, ListenReadTimeout, ListenMaxConns): without them,
// 8,000 idle keep-alive connections stayed open for good (fds exhausted,
// RSS 11 → 256 MB). No write timeout: an on-demand trace may run for
// MaxTraceSeconds.
func (a *Agent) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("agent: Listen: %w", err)
	}
	a.addr = ln.Addr().String()
	a.srv = &http.Server{
		Handler:           a.Endpoints(),
		ReadHeaderTimeout: a.opts.ListenReadTimeout,
		ReadTimeout:       a.opts.ListenReadTimeout,
		IdleTimeout:       a.opts.ListenIdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	limited := newLimitListener(ln, a.opts.ListenMaxConns)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.srv.Serve(limited); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "latscope agent: endpoints on %s: %v\n", a.addr, err)
		}
	}()
	return nil
}

// sampler writes host samples, the CPU counter and the main module into
// the trace. A nil hostsig.Sampler (no /proc) logs only the module.
type sampler struct {
	mu       sync.Mutex
	s        *hostsig.Sampler
	module   string        // main module path; "" logs none
	instance string        // instance name, logged with the module; "" logs none
	due      time.Duration // the module is logged again once this long has passed
	logged   time.Time     // when the module was last logged
	closed   bool
}

// newSampler returns the sampler of module (Options.Module, or the
// binary's main module when "") and instance (Options.Instance: the host
// name when "", none when "-"), whose loop will tick every interval.
func newSampler(module, instance string, interval time.Duration) *sampler {
	if module == "" {
		module = mainModule()
	}
	module = tracelog.Bound(module, tracelog.MaxString)
	switch instance {
	case "":
		instance = tracelog.DefaultInstance()
	case "-":
		instance = ""
	default:
		instance = tracelog.CleanInstance(instance)
	}
	s := &sampler{module: module, instance: instance, due: moduleDue(interval)}
	if hs, err := hostsig.NewSampler(os.Getpid(), hostsig.Options{}); err == nil {
		s.s = hs // else no /proc: no host samples
	}
	return s
}

// moduleDue is how long after the last module log the loop's next tick
// logs it again: ModuleEvery less half a tick, so that a tick a little
// early does not wait a whole tick more. Logs are then ModuleEvery apart
// when interval divides it, and never more than ModuleEvery + interval/2
// (750 ms): well within tracelog.ModuleLookahead.
func moduleDue(interval time.Duration) time.Duration {
	return tracelog.ModuleEvery - min(interval, tracelog.ModuleEvery)/2
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
// tracelog.CPU; and the main module when due (logModule).
func (s *sampler) log() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !trace.IsEnabled() {
		return
	}
	s.logModule(false)
	if s.s == nil {
		return
	}
	smp, err := s.s.Sample()
	if err != nil {
		return
	}
	if text, err := smp.MarshalText(); err == nil {
		trace.Log(context.Background(), hostsig.LogCategory, tracelog.Bound(string(text), tracelog.MaxString))
	}
	trace.Log(context.Background(), tracelog.CPU, tracelog.FormatCPU(smp.CPU()))
}

// logModule writes the main module under tracelog.Module and the instance
// under tracelog.Instance, outside any task, if forced or if they were last
// written at least s.due ago: they tell the analysers whose code is the
// application and which process this is, so every flight-recorder window
// must hold them near its start. s.mu is held and tracing is on.
func (s *sampler) logModule(force bool) {
	if s.module == "" && s.instance == "" {
		return
	}
	if now := time.Now(); force || now.Sub(s.logged) >= s.due {
		if s.module != "" {
			trace.Log(context.Background(), tracelog.Module, s.module)
		}
		if s.instance != "" {
			trace.Log(context.Background(), tracelog.Instance, s.instance)
		}
		s.logged = now
	}
}

// moduleTick logs the main module when due, and nothing else.
func (s *sampler) moduleTick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !trace.IsEnabled() {
		return
	}
	s.logModule(false)
}

// traceStarted logs the main module at the start of a trace just begun
// (Endpoints' trace), however recently the last one was written.
func (s *sampler) traceStarted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !trace.IsEnabled() {
		return
	}
	s.logModule(true)
}

// loop logs a sample every interval until ctx is done, and the main module
// at least every tracelog.ModuleEvery: on the same ticker when interval is
// no longer than that, else on a second one.
func (s *sampler) loop(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var mod <-chan time.Time
	if interval > tracelog.ModuleEvery && (s.module != "" || s.instance != "") {
		mt := time.NewTicker(tracelog.ModuleEvery)
		defer mt.Stop()
		mod = mt.C
	}
	s.log()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.log()
		case <-mod:
			s.moduleTick()
		}
	}
}

// moduleLoop logs only the main module, every tracelog.ModuleEvery until
// ctx is done: the agent without a recorder, for traces taken by others.
func (s *sampler) moduleLoop(ctx context.Context) {
	t := time.NewTicker(tracelog.ModuleEvery)
	defer t.Stop()
	s.moduleTick()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.moduleTick()
		}
	}
}

// close stops all logging.
func (s *sampler) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.s != nil {
		s.s.Close()
		s.s = nil
	}
}
