// Command gentrace records a large, real execution trace for benchmarks: it
// runs a dense request-shaped workload on loopback (an HTTP service whose
// handlers open a runtime/trace task named "request", call a real upstream
// over HTTP, query a stand-in database over TCP through a connection pool,
// fan out to goroutines, hand work to a worker pool over channels and
// contend for mutexes, driven by many closed-model clients) and stops the
// tracer once the trace file reaches the requested size.
//
// Usage:
//
//	go run ./lab/bench/gentrace -size 100MB -o lab/bench/out/trace-100MB.trace
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/internal/sticky"
)

// Options configure a recording.
type Options struct {
	Size       byteSize      // stop the tracer once the file has this many bytes
	Out        string        // output file
	Clients    int           // closed-model clients of the service
	DBConns    int           // database connection pool size (contended)
	Workers    int           // long-lived worker goroutines fed over a channel
	Fanout     int           // goroutines each request forks
	CPUProfile bool          // run the CPU profiler, so the trace carries CPU samples
	Warmup     time.Duration // load before the trace starts
	Timeout    time.Duration // give up if the size is not reached by then
}

// DefaultOptions are the flags' defaults.
var DefaultOptions = Options{
	Size: 100 << 20, Out: "gentrace.trace", Clients: 96, DBConns: 24, Workers: 4, Fanout: 3,
	CPUProfile: true, Warmup: time.Second, Timeout: 30 * time.Minute,
}

func main() {
	if err := run(context.Background(), os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, stdout io.Writer, args []string) error {
	o := DefaultOptions
	fs := flag.NewFlagSet("gentrace", flag.ContinueOnError)
	fs.Var(&o.Size, "size", "stop once the trace has this `SIZE` (e.g. 100MB, 1GB; binary units)")
	fs.StringVar(&o.Out, "o", o.Out, "output `FILE`")
	fs.IntVar(&o.Clients, "clients", o.Clients, "closed-model clients")
	fs.IntVar(&o.DBConns, "db-conns", o.DBConns, "database connection pool size")
	fs.IntVar(&o.Workers, "workers", o.Workers, "worker goroutines fed over a channel")
	fs.IntVar(&o.Fanout, "fanout", o.Fanout, "goroutines forked per request")
	fs.BoolVar(&o.CPUProfile, "cpuprofile", o.CPUProfile, "run the CPU profiler too, so the trace carries CPU samples")
	fs.DurationVar(&o.Warmup, "warmup", o.Warmup, "load before the trace starts")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "give up if the size is not reached by then")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Clients < 1 || o.DBConns < 1 || o.Workers < 1 || o.Fanout < 0 {
		return fmt.Errorf("-clients, -db-conns, -workers must be positive and -fanout not negative")
	}
	return record(ctx, stdout, o)
}

// record runs the workload and traces it until the file reaches o.Size.
func record(ctx context.Context, stdout io.Writer, o Options) error {
	f, err := os.Create(o.Out)
	if err != nil {
		return fmt.Errorf("-o %s: %w", o.Out, err)
	}
	defer f.Close()
	ws, err := startWorkload(o)
	if err != nil {
		return err
	}
	defer ws.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ld := &loadRun{done: make(chan struct{})}
	go func() { ld.err = ws.drive(ctx, o.Clients); close(ld.done) }()
	select {
	case <-ld.done:
		return fmt.Errorf("warm-up: %w", ld.err)
	case <-time.After(o.Warmup):
	}
	if o.CPUProfile {
		if err := pprof.StartCPUProfile(io.Discard); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	sw := sticky.New(f) // runtime/trace drops write errors
	cw := &countingWriter{w: sw}
	req0, t0 := ws.requests.Load(), time.Now()
	if err := trace.Start(cw); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	err = waitSize(ctx, cw, int64(o.Size), o.Timeout, ld)
	trace.Stop()
	wall, reqs := time.Since(t0), ws.requests.Load()-req0
	cancel()
	<-ld.done
	if err != nil {
		return err
	}
	if err := sw.Err(); err != nil {
		return fmt.Errorf("-o %s: %w", o.Out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-o %s: %w", o.Out, err)
	}
	n := cw.n.Load()
	fmt.Fprintf(stdout, "gentrace: %s: %d bytes (%.1f MiB) in %.1fs, %d requests (%.0f/s), %d clients, GOMAXPROCS %d\n",
		o.Out, n, float64(n)/(1<<20), wall.Seconds(), reqs, float64(reqs)/wall.Seconds(), o.Clients, runtime.GOMAXPROCS(0))
	return nil
}

// waitSize returns once cw has written size bytes, the load fails, or the
// timeout passes.
func waitSize(ctx context.Context, cw *countingWriter, size int64, timeout time.Duration, ld *loadRun) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for cw.n.Load() < size {
		select {
		case <-ld.done:
			return fmt.Errorf("load stopped early: %w", ld.err)
		case <-deadline:
			return fmt.Errorf("-timeout %v: trace has only %d of %d bytes", timeout, cw.n.Load(), size)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// loadRun is the running load: err is set before done is closed.
type loadRun struct {
	done chan struct{}
	err  error
}

// countingWriter counts the bytes written through it; the tracer writes from
// its own goroutine while waitSize reads the count.
type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
