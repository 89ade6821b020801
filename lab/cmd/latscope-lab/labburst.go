package main

import (
	"context"
	"fmt"
	"io"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/lab/burst"
)

const labBurstSynopsis = "burst-serve [flags]"

const labBurstExamples = `
examples:
  latscope-lab burst-serve --mode spawn --addr-file /tmp/burst.addr
  latscope-lab burst-serve --mode fixed --procs 32 --batch 20000 --every 100ms --work 10
  curl http://ADDR/stats; curl -o cpu.pprof 'http://ADDR/profile?seconds=5&hz=200'
  curl -o burst.trace 'http://ADDR/trace?seconds=2'; latscope analyze burst.trace
`

func init() {
	cli.Register("burst-serve", "the burst scenario's fan-out component (GOMAXPROCS, batches, worker modes), as a process of its own", runBurstServe)
}

// runBurstServe runs the burst component of the burst lab scenario as its
// own process: it sets GOMAXPROCS, receives a batch of events at a fixed
// interval, fans them out as --mode says, and serves its counters, a CPU
// profile and a trace on loopback until ctx is cancelled. The lab command
// dispatches `latscope-lab burst-serve` here.
func runBurstServe(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := parseBurstServe(stderr, args)
	if err != nil {
		return err
	}
	if err := burst.Serve(ctx, cfg, stdout); err != nil {
		return fmt.Errorf("burst-serve: %w", err)
	}
	return nil
}

// parseBurstServe parses and checks the flags.
func parseBurstServe(stderr io.Writer, args []string) (burst.ServeConfig, error) {
	cfg := burst.DefaultServeConfig
	fs := cli.NewFlagSet("burst-serve", labBurstSynopsis, stderr)
	cfg.RegisterFlags(fs.FlagSet)
	cli.UsageWith(fs, stderr, labBurstSynopsis, labBurstExamples)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("burst-serve: unexpected argument %q", fs.Arg(0))
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("burst-serve: --%w", err) // Validate starts with the field name, which is the flag name
	}
	return cfg, nil
}
