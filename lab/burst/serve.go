package burst

import (
	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/sticky"
	"github.com/latscope/latscope/lab"

	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	rpprof "runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"time"
)

// ServeConfig configures `latscope-lab burst-serve`.
type ServeConfig struct {
	Config
	Addr     string // listen address (loopback)
	AddrFile string // write the listening address here once listening
}

// DefaultServeConfig is the configuration without flags.
var DefaultServeConfig = ServeConfig{Config: DefaultConfig, Addr: "127.0.0.1:0"}

// DefaultHz is the CPU profiling rate of /profile and /trace: twice the
// runtime/pprof default, for more samples in a short window. Linux checks
// per-thread CPU timers on scheduler ticks, so a rate above the kernel's
// CONFIG_HZ (250 here) yields no more samples and a profile whose period
// overstates each sample; 200 Hz stays below it.
const DefaultHz = 200

// RegisterFlags defines the flags of burst-serve on fs, parsing into c.
// Args is its inverse.
func (c *ServeConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&c.Mode, "mode", "`MODE` of fan-out: spawn (a goroutine per event), pool (GOMAXPROCS workers) or fixed (2 steady workers)")
	fs.IntVar(&c.Procs, "procs", c.Procs, "GOMAXPROCS to set (`N`)")
	fs.IntVar(&c.Batch, "batch", c.Batch, "events per batch (`N`)")
	fs.DurationVar(&c.Every, "every", c.Every, "interval between batches (`DURATION`)")
	fs.IntVar(&c.Work, "work", c.Work, "SHA-256 rounds per event (`N`)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "pool width (`N`); 0 = GOMAXPROCS for pool, 2 for fixed")
	fs.StringVar(&c.Addr, "addr", c.Addr, "`ADDR` to listen on")
	fs.StringVar(&c.AddrFile, "addr-file", c.AddrFile, "write the listening address to `FILE` once listening")
}

// Args returns the burst-serve flags that reproduce c.
func (c ServeConfig) Args() []string {
	args := []string{
		"--mode", c.Mode.String(), "--procs", strconv.Itoa(c.Procs), "--batch", strconv.Itoa(c.Batch),
		"--every", c.Every.String(), "--work", strconv.Itoa(c.Work), "--workers", strconv.Itoa(c.Workers),
		"--addr", c.Addr,
	}
	if c.AddrFile != "" {
		args = append(args, "--addr-file", c.AddrFile)
	}
	return args
}

// Serve sets GOMAXPROCS, runs a Service and serves its endpoints on
// loopback until ctx is done:
//
//	/stats                      the counters (JSON Stats)
//	/profile?seconds=S&hz=H     a pprof CPU profile at H Hz (default DefaultHz)
//	/trace?seconds=S&hz=H       an execution trace with CPU samples at H Hz
//	/debug/pprof/               net/http/pprof
//
// It prints one line, "listening on http://ADDR ...", once listening.
func Serve(ctx context.Context, cfg ServeConfig, stdout io.Writer) error {
	svc, err := New(cfg.Config)
	if err != nil {
		return err
	}
	runtime.GOMAXPROCS(svc.Config().Procs)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return opterr.Wrap("addr", fmt.Errorf("%s: %w", cfg.Addr, err))
	}
	addr := ln.Addr().String()
	if cfg.AddrFile != "" {
		if err := atomicfile.WriteString(cfg.AddrFile, addr+"\n"); err != nil {
			ln.Close()
			return opterr.Wrap("addr-file", fmt.Errorf("%s: %w", cfg.AddrFile, err))
		}
	}
	c := svc.Config()
	fmt.Fprintf(stdout, "listening on http://%s mode=%s gomaxprocs=%d workers=%d batch=%d every=%v work=%d\n",
		addr, c.Mode, runtime.GOMAXPROCS(0), c.Workers, c.Batch, c.Every, c.Work)
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(rctx) }()
	err = serveUntilDone(ctx, &http.Server{Handler: handler(svc), ReadHeaderTimeout: 10 * time.Second}, ln)
	stop()
	<-ran
	svc.Close()
	return err
}

func handler(svc *Service) http.Handler {
	var capture sync.Mutex // one profile or trace at a time
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(svc.Stats())
	})
	mux.HandleFunc("/profile", func(w http.ResponseWriter, r *http.Request) {
		captureHandler(w, r, &capture, func(d time.Duration, hz int) error { return captureProfile(r.Context(), w, d, hz) })
	})
	mux.HandleFunc("/trace", func(w http.ResponseWriter, r *http.Request) {
		captureHandler(w, r, &capture, func(d time.Duration, hz int) error { return captureTrace(r.Context(), w, d, hz) })
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// captureHandler parses seconds and hz, holds the capture lock and runs f.
func captureHandler(w http.ResponseWriter, r *http.Request, mu *sync.Mutex, f func(time.Duration, int) error) {
	d, hz, err := captureParams(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !mu.TryLock() {
		http.Error(w, ErrBusy.Error(), http.StatusConflict)
		return
	}
	defer mu.Unlock()
	w.Header().Set("Content-Type", "application/octet-stream")
	if err := f(d, hz); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func captureParams(r *http.Request) (time.Duration, int, error) {
	secs, err := strconv.ParseFloat(r.FormValue("seconds"), 64)
	if err != nil || secs <= 0 || secs > 600 {
		return 0, 0, fmt.Errorf("seconds=%q: want a number of seconds in (0, 600]", r.FormValue("seconds"))
	}
	hz := DefaultHz
	if s := r.FormValue("hz"); s != "" {
		if hz, err = strconv.Atoi(s); err != nil || hz < 1 || hz > 1000 {
			return 0, 0, fmt.Errorf("hz=%q: want 1 to 1000", s)
		}
	}
	return time.Duration(secs * float64(time.Second)), hz, nil
}

// startCPUProfile starts the CPU profiler at hz. runtime/pprof always asks
// for 100 Hz; setting the rate first makes that request fail harmlessly
// (the runtime prints "cannot set cpu profile rate" on stderr) and the
// profile records the rate in effect, so its period is right.
func startCPUProfile(w io.Writer, hz int) error {
	if hz != 100 {
		runtime.SetCPUProfileRate(hz)
	}
	if err := rpprof.StartCPUProfile(w); err != nil {
		if hz != 100 {
			runtime.SetCPUProfileRate(0)
		}
		return fmt.Errorf("cpu profile: %w", err)
	}
	return nil
}

func captureProfile(ctx context.Context, w io.Writer, d time.Duration, hz int) error {
	sw := sticky.New(w) // runtime/pprof drops write errors
	if err := startCPUProfile(sw, hz); err != nil {
		return err
	}
	lab.Sleep(ctx, d)
	rpprof.StopCPUProfile()
	if err := sw.Err(); err != nil {
		return fmt.Errorf("writing the CPU profile: %w", err)
	}
	return nil
}

// captureTrace records an execution trace while the CPU profiler runs, so
// the trace carries CPU samples.
func captureTrace(ctx context.Context, w io.Writer, d time.Duration, hz int) error {
	if err := startCPUProfile(io.Discard, hz); err != nil {
		return err
	}
	defer rpprof.StopCPUProfile()
	sw := sticky.New(w) // runtime/trace drops write errors
	if err := trace.Start(sw); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	lab.Sleep(ctx, d)
	trace.Stop()
	if err := sw.Err(); err != nil {
		return fmt.Errorf("writing the trace: %w", err)
	}
	return nil
}

// serveUntilDone serves on ln until ctx is done, then shuts srv down.
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
