package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/latscope/latscope/loadgen"
)

func init() {
	register("load", "closed- or open-model HTTP load with exact latency percentiles", runLoad)
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
	var file *resultsFile
	if cfg.out != "" {
		if file, err = createResults(cfg.out); err != nil {
			return err
		}
		defer file.abort()
	}
	rep, err := runLoadgen(ctx, cfg.opts, file)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		printReport(stdout, rep, cfg.json) // what completed is still worth reading
		if file != nil {
			return fmt.Errorf("load: %w (no results file written)", err)
		}
		return fmt.Errorf("load: %w", err)
	}
	if err != nil {
		return err
	}
	if file != nil {
		if err := file.commit(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "load: wrote %d results to %s\n", file.n, cfg.out)
	}
	return printReport(stdout, rep, cfg.json)
}

// runLoadgen runs the load, feeding a report and the results file.
func runLoadgen(ctx context.Context, opts loadgen.Options, file *resultsFile) (*loadgen.Report, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rep := &loadgen.Report{}
	var werr error
	err := loadgen.Run(ctx, opts, func(r loadgen.Result) {
		rep.Add(&r)
		if file != nil && werr == nil {
			if werr = file.write(&r); werr != nil {
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
		return loadgen.NewJSONReporter(rep).Report(w)
	}
	return loadgen.NewTextReporter(rep).Report(w)
}

// parseLoadFlags parses args into a loadConfig; flags may follow the URL.
func parseLoadFlags(args []string, stderr io.Writer) (loadConfig, error) {
	cfg := loadConfig{opts: loadgen.DefaultOptions}
	headers := headerFlag{}
	fs := newLoadFlagSet(&cfg, headers, stderr)
	urls, err := parseInterleaved(fs, args)
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
func newLoadFlagSet(cfg *loadConfig, headers headerFlag, stderr io.Writer) *flag.FlagSet {
	o := &cfg.opts
	fs := newFlagSet("load", loadSynopsis, stderr)
	usageWith(fs, stderr, loadSynopsis, loadUsage)
	fs.IntVar(&o.Clients, "c", o.Clients, "closed model: number of concurrent `clients`")
	fs.IntVar(&o.Clients, "clients", o.Clients, "same as -c")
	fs.DurationVar(&o.Duration, "d", o.Duration, "length of the measured window after the warm-up")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "same as -d")
	fs.DurationVar(&o.Warmup, "warmup", o.Warmup, "warm-up before the measured window; its results are excluded")
	fs.Float64Var(&o.Rate, "rate", o.Rate, "open model: requests per second (0 = closed model)")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", o.MaxInFlight, "open model: most requests outstanding at once")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "per-request timeout (0 = none)")
	fs.DurationVar(&o.Think, "think", o.Think, "closed model: pause between an answer and the next request")
	fs.StringVar(&o.Method, "method", o.Method, "HTTP `method`")
	fs.Var(headers, "H", "request header `\"Name: value\"` (repeatable)")
	fs.StringVar(&cfg.out, "o", "", "write every result to `FILE` as JSON lines (CSV if FILE ends in .csv)")
	fs.BoolVar(&cfg.json, "json", false, "print the report as JSON")
	return fs
}

// parseInterleaved parses flags that may come before or after the
// positional arguments, and returns the latter.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// checkLoadConfig validates the flags, naming the first bad one.
func checkLoadConfig(cfg *loadConfig) error {
	o := &cfg.opts
	if err := loadgen.ValidateURL(o.URL); err != nil {
		return fmt.Errorf("load: URL: %w", err)
	}
	if _, err := http.NewRequest(o.Method, o.URL, nil); err != nil {
		return fmt.Errorf("load: flag --method %q: %w", o.Method, err)
	}
	checks := []struct {
		bad        bool
		flag, want string
		got        any
	}{
		{o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0), "--rate", "a finite rate ≥ 0", o.Rate},
		{!o.Open() && o.Clients < 1, "-c/--clients", "at least 1", o.Clients},
		{o.Open() && o.MaxInFlight < 1, "--max-in-flight", "at least 1", o.MaxInFlight},
		{o.Duration <= 0, "-d/--duration", "more than 0", o.Duration},
		{o.Warmup < 0, "--warmup", "at least 0", o.Warmup},
		{o.Timeout < 0, "--timeout", "at least 0", o.Timeout},
		{o.Think < 0, "--think", "at least 0", o.Think},
		{cfg.out != "" && strings.HasSuffix(cfg.out, string(filepath.Separator)), "-o", "a file name", cfg.out},
	}
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("load: flag %s: want %s, got %v", c.flag, c.want, c.got)
		}
	}
	return o.Validate()
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

// Set adds one "Name: value" header.
func (h headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsFunc(name, notTokenChar) {
		return fmt.Errorf("want \"Name: value\", got %q", s)
	}
	http.Header(h).Add(name, strings.TrimSpace(value))
	return nil
}

// notTokenChar reports a character not allowed in a header name (RFC 9110 token).
func notTokenChar(c rune) bool {
	return c <= ' ' || c >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c)
}

// resultsFile writes results to a temporary file next to the target and
// renames it into place only on success, so a failed run leaves no partial
// file.
type resultsFile struct {
	path string
	f    *os.File
	buf  *bufio.Writer
	enc  loadgen.Encoder
	n    int
	done bool
}

func createResults(path string) (*resultsFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("load: flag -o: %w", err)
	}
	rf := &resultsFile{path: path, f: f, buf: bufio.NewWriter(f)}
	rf.enc = loadgen.NewJSONEncoder(rf.buf)
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		rf.enc = loadgen.NewCSVEncoder(rf.buf)
	}
	return rf, nil
}

func (rf *resultsFile) write(r *loadgen.Result) error {
	if err := rf.enc.Encode(r); err != nil {
		return fmt.Errorf("load: writing %s: %w", rf.f.Name(), err)
	}
	rf.n++
	return nil
}

// commit flushes the file and renames it into place.
func (rf *resultsFile) commit() error {
	err := rf.buf.Flush()
	if err == nil {
		err = rf.f.Chmod(0o644)
	}
	if err == nil {
		err = rf.f.Close()
	}
	if err == nil {
		err = os.Rename(rf.f.Name(), rf.path)
	}
	if err != nil {
		return fmt.Errorf("load: writing %s: %w", rf.path, err)
	}
	rf.done = true
	return nil
}

// abort removes the temporary file unless commit succeeded.
func (rf *resultsFile) abort() {
	if rf.done {
		return
	}
	rf.f.Close()
	os.Remove(rf.f.Name())
}
