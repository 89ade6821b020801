package dbwait

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/latscope/latscope/internal/opterr"
)

// ServeUsage is the synopsis of `latscope-lab dbwait-serve`.
const ServeUsage = "dbwait-serve --db-url URL [--interval 20ms] [--sample-interval 100ms] [--cpu-work 8ms --cpu-fanout 2] [--addr ADDR] [--addr-file FILE]"

// RegisterFlags defines the flags of `latscope-lab dbwait-serve` on fs,
// with c's values as defaults.
func (c *ServeConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DBURL, "db-url", c.DBURL, "PostgreSQL `URL` or DSN (required)")
	fs.StringVar(&c.Addr, "addr", c.Addr, "HTTP listen `ADDR` (/debug/pprof, /stats)")
	fs.StringVar(&c.AddrFile, "addr-file", c.AddrFile, "write the address to `FILE` once ready")
	fs.DurationVar(&c.Interval, "interval", c.Interval, "between lookups")
	fs.DurationVar(&c.SampleInterval, "sample-interval", c.SampleInterval, "between host samples logged into the trace")
	fs.DurationVar(&c.CPUWork, "cpu-work", c.CPUWork, "CPU computed alongside each lookup, while its statement is in flight")
	fs.IntVar(&c.CPUFanout, "cpu-fanout", c.CPUFanout, "goroutines (`N`) sharing that CPU work")
}

// Check validates a parsed configuration.
func (c ServeConfig) Check() error {
	switch {
	case c.DBURL == "":
		return opterr.Wrap("db-url", errors.New("is required"))
	case c.Interval <= 0:
		return opterr.Wrap("interval", fmt.Errorf("%v: want a positive duration", c.Interval))
	case c.SampleInterval <= 0:
		return opterr.Wrap("sample-interval", fmt.Errorf("%v: want a positive duration", c.SampleInterval))
	case c.CPUWork < 0:
		return opterr.Wrap("cpu-work", fmt.Errorf("%v: want a duration >= 0", c.CPUWork))
	case c.CPUFanout < 1:
		return opterr.Wrap("cpu-fanout", fmt.Errorf("%d: want at least 1 goroutine", c.CPUFanout))
	}
	return nil
}

// ServeMain parses the flags of `latscope-lab dbwait-serve` and runs
// Serve; latscope-lab does the same with its own flag set.
func ServeMain(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := ParseServeFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "usage: latscope-lab %s\n", ServeUsage)
		return nil
	}
	if err != nil {
		return err
	}
	return Serve(ctx, cfg, stdout)
}

// ParseServeFlags parses the flags into a ServeConfig.
func ParseServeFlags(args []string) (ServeConfig, error) {
	cfg := DefaultServeConfig
	fs := flag.NewFlagSet("dbwait-serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("dbwait-serve: %w", err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("dbwait-serve: unexpected argument %q", fs.Arg(0))
	}
	return cfg, cfg.Check()
}
