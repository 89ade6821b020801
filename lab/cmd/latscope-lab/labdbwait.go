package main

import (
	"context"
	"fmt"
	"io"

	"github.com/latscope/latscope/internal/cli"
	labdbwait "github.com/latscope/latscope/lab/dbwait" // registers the dbwait scenario
)

// The lab starts the dbwait scenario's service as `latscope-lab
// dbwait-serve`; it is a lab subcommand, not a top-level one.
func init() {
	cli.Register("dbwait-serve", "the dbwait scenario's service (PostgreSQL queries with SQL comments, host samples in the trace), as a process of its own", runLabDBWaitServe)
}

const labDBWaitServeExamples = `
examples:
  latscope-lab dbwait-serve --db-url postgres://postgres@127.0.0.1:5432/postgres --addr-file /tmp/svc.addr
  latscope-lab dbwait-serve --db-url URL --cpu-work 8ms        the CPU-heavy handler of the quota condition
  curl -o t.trace 'http://ADDR/debug/pprof/trace?seconds=5'; latscope dbwait --pglog LOG t.trace
`

// runLabDBWaitServe runs the service of `latscope-lab dbwait` as its own
// process.
func runLabDBWaitServe(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg := labdbwait.DefaultServeConfig
	fs := cli.NewFlagSet("dbwait-serve", labdbwait.ServeUsage, stderr)
	cfg.RegisterFlags(fs.FlagSet)
	cli.UsageWith(fs, stderr, labdbwait.ServeUsage, labDBWaitServeExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("dbwait-serve: unexpected argument %q", fs.Arg(0))
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	return labdbwait.Serve(ctx, cfg, stdout)
}
