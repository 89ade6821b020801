package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/latscope/latscope/analysis"
	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/render"
	htmlreport "github.com/latscope/latscope/report/html"
	"github.com/latscope/latscope/report/pprofexport"
	"github.com/latscope/latscope/sched"
)

func init() {
	register("analyze", "per-request latency budget, critical path and predictions from a Go execution trace", runAnalyze)
}

// analyzeOptions are the flags of `latscope analyze`.
type analyzeOptions struct {
	json     bool
	app      stringList
	frame    regexpFlag
	task     string
	predict  predictions
	cpuSecs  float64
	clients  float64
	cores    float64
	pool     int
	infer    inferFlag
	minShare float64
	partial  bool
	jfr      jfrOptions
	html     string
	pprofDir string
	cpuProf  string
}

// jfrOptions are the flags that only apply to JVM recordings (.jfr).
type jfrOptions struct {
	Handler      string   // frame that marks a request's thread time (--handler)
	Requests     int      // request count, when known (--requests)
	RequestsFrom string   // a latscope load results file to count requests from (--requests-from)
	App          []string // --app prefixes
}

// analyzeJFR reads a JFR recording into the same result as a Go trace. It
// is set by analyze_jfr.go.
var analyzeJFR func(ctx context.Context, path string, o jfrOptions) (*budget.Result, error)

const analyzeExamples = `
examples:
  latscope analyze demo.trace
  latscope analyze --predict overlap=callUpstream,queryDB --predict remove=lockedSection demo.trace
  latscope analyze --json --cpu-seconds 0.171 demo.trace
  curl -s localhost:6060/debug/pprof/trace?seconds=5 | latscope analyze -
`

func runAnalyze(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var o analyzeOptions
	fs := newFlagSet("analyze", "analyze [flags] TRACE", stderr)
	fs.BoolVar(&o.json, "json", false, "print JSON (schema: docs/json.md)")
	fs.Var(&o.app, "app", "package-path `PREFIX` of your code (repeatable); default: anything outside the standard library and known infrastructure")
	fs.Var(&o.frame, "frame", "show only terms whose application frame matches `REGEX`")
	fs.StringVar(&o.task, "task", "", "show only requests of task type `NAME`")
	fs.Var(&o.predict, "predict", "what-if `SPEC`: remove=TERM, scale=TERM:FACTOR or overlap=TERM,TERM (repeatable)")
	fs.Float64Var(&o.cpuSecs, "cpu-seconds", -1, "process CPU time (utime+stime) over the trace window from an independent counter, for the cross-check")
	fs.Float64Var(&o.clients, "clients", 0, "closed-model clients for throughput predictions (default: estimated from the trace)")
	fs.Float64Var(&o.cores, "cores", 0, "CPU cores available to the service (default: GOMAXPROCS in the trace)")
	fs.IntVar(&o.pool, "pool", 0, "connection pool size, to cap predicted throughput by the pool")
	fs.Var(&o.infer, "infer", "where requests come from: auto (tasks, else net/http server requests), tasks, http")
	fs.Float64Var(&o.minShare, "min-share", 0.5, "fold terms under this share of the mean (percent) into one row in text output")
	fs.BoolVar(&o.partial, "partial", false, "analyse a truncated trace up to where it breaks, with a warning, instead of failing")
	fs.StringVar(&o.jfr.Handler, "handler", "", "JVM recordings: the handler `FRAME` (e.g. DemoController.handle) whose threads' events are request time")
	fs.IntVar(&o.jfr.Requests, "requests", 0, "JVM recordings: the number of requests in the recording")
	fs.StringVar(&o.jfr.RequestsFrom, "requests-from", "", "JVM recordings: count requests from a latscope load results `FILE`")
	fs.StringVar(&o.html, "html", "", "also write a self-contained HTML report to `FILE`")
	fs.StringVar(&o.pprofDir, "pprof", "", "also write pprof profiles (wall, off-CPU, critical path) into `DIR`")
	fs.StringVar(&o.cpuProf, "cpu", "", "a pprof CPU `PROFILE` of the same window, for scheduler-overhead analysis")
	usageWith(fs, stderr, "analyze [flags] TRACE", analyzeExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("analyze: want exactly one trace file (or - for standard input), got %d arguments", fs.NArg())
	}
	if o.clients < 0 || o.cores < 0 || o.pool < 0 || o.minShare < 0 {
		return errors.New("analyze: --clients, --cores, --pool and --min-share must not be negative")
	}
	opts := budget.DefaultOptions
	opts.Rules.App = o.app
	opts.Infer = o.infer.mode
	opts.Predictions = o.predict
	var res *budget.Result
	var schedRep *sched.Report
	var err error
	if strings.HasSuffix(fs.Arg(0), ".jfr") {
		if analyzeJFR == nil {
			return errors.New("analyze: this build cannot read JVM recordings")
		}
		o.jfr.App = o.app
		res, err = analyzeJFR(ctx, fs.Arg(0), o.jfr)
	} else {
		sa, mk := schedConsumer(opts)
		res, err = analysis.File(ctx, fs.Arg(0), opts, o.partial, mk)
		if err == nil {
			schedRep, err = finishSched(*sa, o.cpuProf, opts)
		}
	}
	if err != nil {
		return err
	}
	in := render.Inputs{File: fs.Arg(0), CPUSeconds: o.cpuSecs, Clients: o.clients, Cores: o.cores, Pool: o.pool,
		Task: o.task, Frame: o.frame.re, MinShare: o.minShare}
	rep, err := render.Build(res, in)
	if err != nil {
		return err
	}
	if err := noMatch(res); err != nil {
		return err
	}
	if err := writeExtras(&o, opts, rep, res); err != nil {
		return err
	}
	addSchedFindings(rep, schedRep)
	if o.json {
		return rep.WriteJSON(stdout)
	}
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	return writeSchedText(stdout, schedRep)
}

// noMatch turns a prediction that matched no term into an error.
func noMatch(res *budget.Result) error {
	for _, w := range res.Warnings {
		var f *budget.Finding
		if errors.As(w, &f) && f.Kind == budget.FindNoMatch {
			return fmt.Errorf("--predict: %s", f.Text)
		}
	}
	return nil
}

// analyzeFile runs the analyser over one trace file ("-" is standard input).
func analyzeFile(ctx context.Context, name string, opts budget.Options, partial bool) (*budget.Result, error) {
	return analysis.File(ctx, name, opts, partial)
}

// writeExtras writes the HTML report and pprof profiles that flags ask for.
func writeExtras(o *analyzeOptions, opts budget.Options, rep *render.Report, res *budget.Result) error {
	if o.html != "" {
		hopts := htmlreport.DefaultOptions
		hopts.MinShare = o.minShare
		if err := htmlreport.WriteFile(o.html, rep, res, hopts); err != nil {
			return err
		}
	}
	if o.pprofDir != "" {
		popts := pprofexport.DefaultOptions
		popts.Rules, popts.Task = opts.Rules, o.task
		if _, err := pprofexport.WriteDir(o.pprofDir, res, popts); err != nil {
			return err
		}
	}
	return nil
}
