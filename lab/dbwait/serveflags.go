package dbwait

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// ServeUsage is the synopsis of `latscope lab dbwait-serve`.
const ServeUsage = "lab dbwait-serve --db-url URL [--interval 20ms] [--sample-interval 100ms] [--cpu-work 8ms --cpu-fanout 2] [--addr ADDR] [--addr-file FILE]"

// ServeMain parses the flags of `latscope lab dbwait-serve` and runs Serve.
func ServeMain(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := ParseServeFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "usage: latscope %s\n\nThe lab's dbwait service (run by `latscope lab dbwait`).\n", ServeUsage)
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
	fs.StringVar(&cfg.DBURL, "db-url", "", "PostgreSQL URL or DSN (required)")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "HTTP listen address")
	fs.StringVar(&cfg.AddrFile, "addr-file", "", "write the address here once ready")
	fs.DurationVar(&cfg.Interval, "interval", cfg.Interval, "between lookups")
	fs.DurationVar(&cfg.SampleInterval, "sample-interval", cfg.SampleInterval, "between host samples")
	fs.DurationVar(&cfg.CPUWork, "cpu-work", 0, "CPU computed alongside each lookup")
	fs.IntVar(&cfg.CPUFanout, "cpu-fanout", cfg.CPUFanout, "goroutines sharing that CPU work")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("dbwait-serve: %w", err)
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("dbwait-serve: unexpected argument %q", fs.Arg(0))
	case cfg.DBURL == "":
		return cfg, errors.New("dbwait-serve: flag --db-url is required")
	case cfg.Interval <= 0 || cfg.SampleInterval <= 0:
		return cfg, fmt.Errorf("dbwait-serve: --interval %v, --sample-interval %v: want positive durations", cfg.Interval, cfg.SampleInterval)
	case cfg.CPUWork < 0 || cfg.CPUFanout < 1:
		return cfg, fmt.Errorf("dbwait-serve: --cpu-work %v --cpu-fanout %d: want a duration >= 0 and at least 1 goroutine", cfg.CPUWork, cfg.CPUFanout)
	}
	return cfg, nil
}
