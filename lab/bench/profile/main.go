// Command profile runs one stage of latscope's analysis over a trace under
// the CPU profiler (and optionally the heap profiler), to see where the time
// and memory of `latscope analyze` go. The stages nest:
//
//	readloop  golang.org/x/exp/trace ReadEvent until EOF, nothing else
//	tracein   tracein.Reader.Next: the above plus copying out records and interning stacks
//	budget    tracein plus budget.Analyzer (analysis.Reader, the shared read loop)
//	analyze   budget plus the scheduler analysis (sched.Analyzer) fed by the same loop,
//	          as `latscope analyze` does
//
// It prints one line: stage, events (records for budget and analyze), bytes,
// seconds, MiB/s, peak RSS (VmHWM), bytes allocated, and GC cycles.
//
// Usage:
//
//	go run ./lab/bench/profile -stage analyze -cpuprofile lab/bench/out/cpu.pprof lab/bench/out/trace-100MB.trace
//	go tool pprof -top lab/bench/out/cpu.pprof
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/tracein"
	"golang.org/x/exp/trace"
)

// Options are the command's flags.
type Options struct {
	Stage      string // readloop, tracein, budget or analyze
	CPUProfile string // write a CPU profile here
	MemProfile string // write an allocation profile here (all allocations, every 512 KiB)
	Fix        bool   // budget.Options.FixPotential (the "fix" column: one simulation per critical term per request)
	HeapAt     string // comma-separated times into the run: write the live heap (after a GC) to MemProfile.N at each
}

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		os.Exit(2)
	}
}

func run(stdout io.Writer, args []string) error {
	var o Options
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.StringVar(&o.Stage, "stage", "analyze", "what to run: readloop, tracein, budget or analyze")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile to `FILE`")
	fs.StringVar(&o.MemProfile, "memprofile", "", "write an allocation profile to `FILE`")
	fs.StringVar(&o.HeapAt, "heapat", "", "with -memprofile: also write the live heap (after a collection) to `FILE.N` at these comma-separated times into the run (e.g. 2s,4s)")
	fs.BoolVar(&o.Fix, "fix", budget.DefaultOptions.FixPotential, "stages budget and analyze: compute the fix column (budget.Options.FixPotential)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("want one trace file, got %d arguments", fs.NArg())
	}
	opts := budget.DefaultOptions
	opts.FixPotential = o.Fix
	stages := map[string]func(name string, r io.Reader) (int64, error){
		"readloop": readLoop,
		"tracein":  traceinLoop,
		"budget":   func(name string, r io.Reader) (int64, error) { return analyzeLoop(name, r, opts, false) },
		"analyze":  func(name string, r io.Reader) (int64, error) { return analyzeLoop(name, r, opts, true) },
	}
	stage, ok := stages[o.Stage]
	if !ok {
		return fmt.Errorf("-stage %q: want readloop, tracein, budget or analyze", o.Stage)
	}
	name := fs.Arg(0)
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if o.MemProfile != "" {
		runtime.MemProfileRate = 512 << 10
	}
	if o.CPUProfile != "" {
		pf, err := os.Create(o.CPUProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
	}
	var snaps []time.Duration
	if o.HeapAt != "" {
		if o.MemProfile == "" {
			return fmt.Errorf("-heapat needs -memprofile")
		}
		for _, s := range strings.Split(o.HeapAt, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("-heapat: %w", err)
			}
			snaps = append(snaps, d)
		}
	}
	t0 := time.Now()
	stop := make(chan struct{})
	go heapSnapshots(o.MemProfile, t0, snaps, stop)
	events, err := stage(name, f)
	close(stop)
	wall := time.Since(t0)
	if o.CPUProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	if o.MemProfile != "" {
		if err := writeHeap(o.MemProfile); err != nil {
			return err
		}
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	unit := "trace events"
	if o.Stage == "budget" || o.Stage == "analyze" {
		unit = "records analysed"
	}
	fmt.Fprintf(stdout, "%s: %d %s, %d bytes, %.2fs, %.1f MiB/s, peak RSS %.0f MiB, allocated %.0f MiB in %d objects, %d GCs\n",
		o.Stage, events, unit, st.Size(), wall.Seconds(), float64(st.Size())/(1<<20)/wall.Seconds(),
		float64(peakRSS())/(1<<20), float64(ms.TotalAlloc)/(1<<20), ms.Mallocs, ms.NumGC)
	return nil
}

func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	return nil
}

// heapSnapshots writes the live heap to path.1, path.2, … at the times
// into the run in at, until stop is closed.
func heapSnapshots(path string, t0 time.Time, at []time.Duration, stop chan struct{}) {
	for i, d := range at {
		select {
		case <-time.After(time.Until(t0.Add(d))):
		case <-stop:
			return
		}
		runtime.GC()
		f, err := os.Create(path + "." + strconv.Itoa(i+1))
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile: -heapat:", err)
			return
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			fmt.Fprintln(os.Stderr, "profile: -heapat:", err)
		}
		f.Close()
	}
}

func readLoop(name string, r io.Reader) (int64, error) {
	tr, err := trace.NewReader(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	var n int64
	for {
		if _, err := tr.ReadEvent(); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, fmt.Errorf("%s: event %d: %w", name, n, err)
		}
		n++
	}
}

func traceinLoop(name string, r io.Reader) (int64, error) {
	tr, err := tracein.NewReader(name, r)
	if err != nil {
		return 0, err
	}
	recs := make([]tracein.Event, 1024) // as the analysis's decoding stage reads
	for {
		if _, err := tr.Fill(recs); err == io.EOF {
			return tr.Events(), nil
		} else if err != nil {
			return tr.Events(), err
		}
	}
}

// analyzeLoop runs the shared read loop of `latscope analyze`
// (analysis.Reader), with the scheduler analysis as a second consumer when
// withSched is set (as the command does), and finalises both.
func analyzeLoop(name string, r io.Reader, opts budget.Options, withSched bool) (int64, error) {
	var sa *sched.Analyzer
	var also []analysis.NewConsumer
	if withSched {
		also = append(also, func(st *tracein.Stacks, rules frame.Rules) analysis.Consumer {
			sa = sched.New(sched.Options{Rules: rules}, st)
			return sa
		})
	}
	res, err := analysis.Reader(context.Background(), name, r, opts, false, also...)
	if err != nil {
		return 0, err
	}
	if sa != nil {
		sa.Finalize()
	}
	return res.Info.Records, nil
}

// peakRSS returns the process's peak resident set size (VmHWM) in bytes, or 0.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, _ := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			return kb << 10
		}
	}
	return 0
}
