package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/demotrace"
)

func init() {
	cli.Register("demo-trace", "record a trace of a small demo service on loopback, to try analyze on", runDemoTrace)
}

const demoTraceExamples = `
examples:
  latscope demo-trace -o demo.trace && latscope analyze demo.trace
  latscope demo-trace --scenario waitgroup -o overlapped.trace
  latscope demo-trace --list
`

func runDemoTrace(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg := demotrace.DefaultConfig
	fs := cli.NewFlagSet("demo-trace", "demo-trace [flags]", stderr)
	out := fs.String("o", "demo.trace", "output `FILE`")
	list := fs.Bool("list", false, "list the scenarios and exit")
	fs.StringVar(&cfg.Scenario, "scenario", cfg.Scenario, "scenario `NAME` (see --list)")
	intVar(fs.FlagSet, &cfg.Clients, "clients", cfg.Clients, 1, 10_000, "closed-model clients `N`")
	intVar(fs.FlagSet, &cfg.Requests, "requests", cfg.Requests, 1, 10_000_000, "requests `N` recorded (after warm-up)")
	fs.BoolVar(&cfg.CPUProfile, "cpuprofile", true, "run the CPU profiler too, so the trace carries CPU samples")
	cli.UsageWith(fs, stderr, "demo-trace [flags]", demoTraceExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *list {
		names := make([]string, 0, len(demotrace.Scenarios))
		for n := range demotrace.Scenarios {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stdout, "%-11s %s\n", n, demotrace.Scenarios[n])
		}
		return nil
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var sum demotrace.Summary
	err := atomicfile.Write(*out, func(w io.Writer) error {
		var err error
		sum, err = demotrace.Record(ctx, demoTraceOutput(w), cfg)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: scenario %s, %d requests from %d clients, client-side mean %.2f ms, process CPU %.3f s over %.2f s\n",
		*out, cfg.Scenario, sum.Requests, cfg.Clients, float64(sum.Mean().Microseconds())/1000, sum.CPU.Seconds(), sum.Wall.Seconds())
	_, err = fmt.Fprintf(stdout, "next: latscope analyze --cpu-seconds %.3f %s\n", sum.CPU.Seconds(), *out)
	return err
}

// demoTraceOutput wraps the output file's writer; tests make it fail (a
// full disk) to check that nothing is left behind.
var demoTraceOutput = func(w io.Writer) io.Writer { return w }
