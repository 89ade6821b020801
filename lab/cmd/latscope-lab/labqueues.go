package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/lab/queues"
)

func init() {
	cli.Register("queues", "the queueing model's acceptance lab: a small pool and tight cores, fixes that saturate each, predictions against re-measured runs", runLabQueues)
	cli.Register("queues-serve", "one service process of the queues lab: GET / is a request, /debug/pprof/trace records a trace", runLabQueuesServe)
}

const labQueuesSynopsis = "queues [flags]"

const labQueuesExamples = `
examples:
  latscope-lab queues               both cases at 6 and 12 clients, 5 s windows (about 50 seconds)
  latscope-lab queues --short       1 s windows (about 15 seconds; noisier)
  latscope-lab queues --loaded      the same with a CPU burner process on every core
  latscope-lab queues --clients 8,24 --window 10s --json
  latscope-lab queues --json -o queues.json    the runs as JSON in queues.json, written once the lab is over
`

// runLabQueues runs the queueing model's acceptance lab: a service process
// with a small pool and tight cores (GOMAXPROCS) under closed HTTP load, a fix that saturates the pool
// in one case and the CPU in the other, predicted from a "before" trace and
// re-measured with the fix applied. It fails when a prediction misses by
// more than queues.Tolerance. With -o, the report standard output would
// have shown (the runs' lines, or the JSON) goes to the file once the lab
// is over, all of it or nothing; the lines still show on standard error
// as the runs end.
func runLabQueues(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg := queues.DefaultConfig
	var short, asJSON, loaded bool
	var clients intList
	var window time.Duration
	var out cli.ReportFile
	fs := cli.NewFlagSet("queues", labQueuesSynopsis, stderr)
	fs.BoolVar(&short, "short", false, "1 s windows (for tests; noisier)")
	fs.BoolVar(&asJSON, "json", false, "print the runs as JSON")
	fs.BoolVar(&loaded, "loaded", false, "run a CPU burner process on every core beside the lab")
	fs.Var(&clients, "clients", "closed-loop client counts `N,N` (default 6,12)")
	fs.DurationVar(&window, "window", 0, "measured window per run (default 5s; --short 1s)")
	out.Register(fs)
	cli.UsageWith(fs, stderr, labQueuesSynopsis, labQueuesExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("queues: unexpected argument %q", fs.Arg(0))
	}
	if short {
		cfg = queues.ShortConfig
	}
	if window > 0 {
		if window > 10*time.Minute {
			return fmt.Errorf("queues: --window %v: at most 10m", window)
		}
		cfg.Window = window
	}
	if len(clients) > 0 {
		cfg.Clients = clients
	}
	// The lab's input is latscope itself, which it runs as the service:
	// -o must not replace it.
	self, _ := os.Executable()
	if err := out.Check([]string{self}, nil); err != nil {
		return fmt.Errorf("queues: %w", err)
	}
	cfg.Command = labCommand
	if loaded {
		cfg.Burners = runtime.NumCPU()
	}
	var lines bytes.Buffer // the runs' lines, for -o
	log := stdout
	switch {
	case asJSON:
		log = stderr
	case out.Path != "":
		log = io.MultiWriter(stderr, &lines)
	}
	rep, err := queues.Execute(ctx, cfg, log)
	if err != nil {
		return fmt.Errorf("queues: %w", err)
	}
	if err := writeQueuesReport(&out, stdout, rep, lines.Bytes(), asJSON); err != nil {
		return fmt.Errorf("queues: %w", err)
	}
	fmt.Fprintf(stderr, "queues: %d of %d predictions within %.0f %% of the re-measured mean and throughput\n", rep.Passed, len(rep.Runs), queues.Tolerance)
	return queuesVerdict(rep)
}

// writeQueuesReport writes the queues lab's report through out: the JSON
// of rep with asJSON, else the runs' lines (which went to stdout as they
// ended when there is no -o, so lines is empty then).
func writeQueuesReport(out *cli.ReportFile, stdout io.Writer, rep *queues.Report, lines []byte, asJSON bool) error {
	return out.Write(stdout, func(w io.Writer) error {
		if !asJSON {
			_, err := w.Write(lines)
			return err
		}
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(rep)
	})
}

// queuesVerdict is the queues lab's verdict: a failedVerdict (exit status
// 1, as a failed check of any lab) when a prediction missed its
// re-measured run; nil when every one passed.
func queuesVerdict(rep *queues.Report) error {
	if rep.Passed < len(rep.Runs) {
		return cli.VerdictFailed("queues: %d of %d predictions missed (causes above)", len(rep.Runs)-rep.Passed, len(rep.Runs))
	}
	return nil
}

const labQueuesServeExamples = `
examples:
  latscope-lab queues-serve --cores 2 --cpu 500us --db 10ms --upstream 30ms --pool 4 --rounds 150 --addr 127.0.0.1:8082
  curl 127.0.0.1:8082/; curl -o t.out '127.0.0.1:8082/debug/pprof/trace?seconds=2'
`

// runLabQueuesServe runs one service process of the queues lab.
func runLabQueuesServe(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg := queues.DefaultServeConfig
	fs := cli.NewFlagSet("queues-serve", queues.ServeUsage, stderr)
	cfg.RegisterFlags(fs.FlagSet)
	cli.UsageWith(fs, stderr, queues.ServeUsage, labQueuesServeExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("queues-serve: unexpected argument %q", fs.Arg(0))
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	return queues.Serve(ctx, cfg)
}

// intList is a comma-separated list of client counts.
type intList []int

func (l *intList) String() string { return fmt.Sprint([]int(*l)) }

func (l *intList) Set(v string) error {
	*l = nil
	for _, f := range splitComma(v) {
		var n int
		if _, err := fmt.Sscanf(f, "%d", &n); err != nil || n < 1 || n > 1000 {
			return fmt.Errorf("want client counts from 1 to 1000 separated by commas, got %q", v)
		}
		*l = append(*l, n)
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
