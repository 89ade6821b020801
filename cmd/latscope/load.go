package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/httpurl"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/report/loadreport"
)

func init() {
	cli.Register("load", "closed- or open-model HTTP load with exact latency percentiles", runLoad)
}

const loadSynopsis = "load [flags] URL"

// loadUsage follows the flags in the command's help.
const loadUsage = `
Sends HTTP load to URL and prints a report of the measured window: request
and error counts, rps, exact (nearest-rank) latency percentiles, status codes.
Closed model by default: --clients clients each send the next request when the
previous answer arrived (after --think). With --rate, open model: requests are
due at that rate and latency counts from when each was due. See docs/load.md.

examples:
  latscope load -c 20 -d 30s http://127.0.0.1:8080/work   closed model, 20 clients, 30 s
  latscope load --rate 200 -d 10s http://127.0.0.1:8080/  open model, 200 requests/s
  latscope load -o results.jsonl --json URL               keep every result, JSON report
  latscope load --method POST -H "X-Run: 7" URL           method and extra headers
`

// loadConfig is where the load command's flags land.
type loadConfig struct {
	opts loadgen.Options
	out  string // results file; "" for none
	json bool   // print the report as JSON
}

func runLoad(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := parseLoadFlags(args, stderr)
	if err != nil {
		return err
	}
	var (
		rep     *loadgen.Report
		written int
	)
	if cfg.out == "" {
		rep, err = runLoadgen(ctx, cfg.opts, nil)
	} else {
		rep, written, err = runLoadToFile(ctx, cfg)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if rep != nil {
			printReport(stdout, rep, cfg.json) // what completed is still worth reading
		}
		if cfg.out != "" {
			return fmt.Errorf("load: %w (no results file written)", err)
		}
		return fmt.Errorf("load: %w", err)
	}
	if err != nil {
		return err
	}
	if cfg.out != "" {
		fmt.Fprintf(stderr, "load: wrote %d results to %s\n", written, cfg.out)
	}
	if err := printReport(stdout, rep, cfg.json); err != nil {
		return err
	}
	return checkSucceeded(rep)
}

// runLoadToFile runs the load and writes every result to cfg.out through
// atomicfile, which renames the file into place only when the run
// completed and refuses to replace what is not a regular file. It returns
// the report (nil if the run never started) and the results written.
func runLoadToFile(ctx context.Context, cfg loadConfig) (*loadgen.Report, int, error) {
	var (
		rep    *loadgen.Report
		runErr error
		n      int
	)
	err := atomicfile.Write(cfg.out, func(w io.Writer) error {
		buf := bufio.NewWriter(w)
		enc := loadgen.NewJSONEncoder(buf)
		if strings.EqualFold(filepath.Ext(cfg.out), ".csv") {
			enc = loadgen.NewCSVEncoder(buf)
		}
		rep, runErr = runLoadgen(ctx, cfg.opts, func(r *loadgen.Result) error {
			if err := enc.Encode(r); err != nil {
				return fmt.Errorf("load: flag -o: writing %s: %w", cfg.out, err)
			}
			n++
			return nil
		})
		if runErr != nil {
			return runErr
		}
		return buf.Flush()
	})
	switch {
	case runErr != nil:
		return rep, n, runErr
	case err != nil:
		return nil, n, fmt.Errorf("load: flag -o: %w", err)
	}
	return rep, n, nil
}

// checkSucceeded is the error of a run that measured no successful
// request: every request failed, or none was measured. Its report has been
// printed; the exit status says it failed.
func checkSucceeded(rep *loadgen.Report) error {
	switch {
	case rep.Requests == 0:
		return fmt.Errorf("load: no request was measured (%d warm-up, %d dropped)", rep.Warmup, rep.Dropped)
	case rep.Succeeded() == 0:
		top := ""
		if len(rep.TopErrors) > 0 {
			top = ", most often: " + rep.TopErrors[0].Message
		}
		return fmt.Errorf("load: all %d measured requests failed%s", rep.Requests, top)
	}
	return nil
}

// runLoadgen runs the load, feeding a report and, if write is not nil,
// write. The first error of write stops the run and is returned.
func runLoadgen(ctx context.Context, opts loadgen.Options, write func(*loadgen.Result) error) (*loadgen.Report, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rep := &loadgen.Report{}
	var werr error
	err := loadgen.Run(ctx, opts, func(r loadgen.Result) {
		rep.Add(&r)
		if write != nil && werr == nil {
			if werr = write(&r); werr != nil {
				cancel()
			}
		}
	})
	rep.Close()
	if werr != nil {
		return nil, werr
	}
	return rep, err
}

func printReport(w io.Writer, rep *loadgen.Report, asJSON bool) error {
	if asJSON {
		return loadreport.WriteJSON(w, rep)
	}
	return loadreport.WriteText(w, rep)
}

// parseLoadFlags parses args into a loadConfig; flags may follow the URL.
func parseLoadFlags(args []string, stderr io.Writer) (loadConfig, error) {
	cfg := loadConfig{opts: loadgen.DefaultOptions}
	headers := headerFlag{}
	fs := newLoadFlagSet(&cfg, headers, stderr)
	urls, err := fs.ParseInterleaved(args)
	if err != nil {
		return cfg, err
	}
	if len(urls) != 1 {
		return cfg, fmt.Errorf("load: want one URL argument, got %d (see latscope load -h)", len(urls))
	}
	cfg.opts.URL = urls[0]
	if len(headers) > 0 {
		cfg.opts.Header = http.Header(headers)
	}
	return cfg, checkLoadConfig(&cfg)
}

// newLoadFlagSet defines the load command's flags over cfg and headers.
func newLoadFlagSet(cfg *loadConfig, headers headerFlag, stderr io.Writer) *cli.FlagSet {
	o := &cfg.opts
	fs := cli.NewFlagSet("load", loadSynopsis, stderr)
	cli.UsageWith(fs, stderr, loadSynopsis, loadUsage)
	fs.IntVar(&o.Clients, "c", o.Clients, "closed model: number of concurrent `clients`")
	fs.IntVar(&o.Clients, "clients", o.Clients, "same as -c")
	fs.DurationVar(&o.Duration, "d", o.Duration, "length of the measured window after the warm-up")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "same as -d")
	fs.DurationVar(&o.Warmup, "warmup", o.Warmup, "warm-up before the measured window; its results are excluded")
	fs.Float64Var(&o.Rate, "rate", o.Rate, "open model: requests per second (0 = closed model)")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", o.MaxInFlight, "open model: most requests outstanding at once")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "per-request timeout (0 = none)")
	fs.DurationVar(&o.Think, "think", o.Think, "closed model: pause between an answer and the next request")
	fs.Func("method", "HTTP `method` (default GET)", func(v string) error {
		if v == "" {
			return errors.New("want a method such as GET or POST, got an empty one")
		}
		o.Method = v
		return nil
	})
	fs.Var(headers, "H", "request header `\"Name: value\"` (repeatable)")
	fs.StringVar(&cfg.out, "o", "", "write every result to `FILE` as JSON lines (CSV if FILE ends in .csv)")
	fs.BoolVar(&cfg.json, "json", false, "print the report as JSON")
	return fs
}

// loadFlags names the flag of each loadgen.Options field the command sets.
var loadFlags = map[string]string{
	"Method": "--method", "Header": "-H", "Clients": "-c/--clients", "Rate": "--rate",
	"MaxInFlight": "--max-in-flight", "Duration": "-d/--duration", "Warmup": "--warmup",
	"Timeout": "--timeout", "Think": "--think",
}

// checkLoadConfig validates the flags: loadgen.Options.Validate checks the
// options, and its error is told in terms of the flag that set the option.
func checkLoadConfig(cfg *loadConfig) error {
	if cfg.out != "" && strings.HasSuffix(cfg.out, string(filepath.Separator)) {
		return fmt.Errorf("load: flag -o %q: want a file name, not a directory", cfg.out)
	}
	err := cfg.opts.Validate()
	oe, ok := errors.AsType[*loadgen.OptionError](err)
	switch {
	case err == nil:
		return nil
	case !ok:
		return fmt.Errorf("load: %w", err)
	case oe.Option == "URL":
		return fmt.Errorf("load: URL %s: %s", httpurl.Redact(oe.Value), oe.Reason)
	case loadFlags[oe.Option] != "":
		return fmt.Errorf("load: flag %s %s: %s", loadFlags[oe.Option], oe.Value, oe.Reason)
	}
	return fmt.Errorf("load: %w", err)
}

// headerFlag collects repeated -H "Name: value" flags.
type headerFlag http.Header

func (h headerFlag) String() string {
	var parts []string
	for name, values := range h {
		for _, v := range values {
			parts = append(parts, name+": "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// Set adds one "Name: value" header; loadgen.Options.Validate checks the
// name and the value.
func (h headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("want \"Name: value\", got %q", s)
	}
	http.Header(h).Add(name, strings.TrimSpace(value))
	return nil
}
