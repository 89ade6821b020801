package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/capture"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/render"
	htmlreport "github.com/latscope/latscope/internal/report/html"
	"github.com/latscope/latscope/internal/report/pprofexport"
	"github.com/latscope/latscope/internal/sched"
)

func init() {
	cli.Register("analyze", "per-request latency budget, critical path and predictions from a Go execution trace or a JVM recording (.jfr)", runAnalyze)
}

// analyzeOptions are the flags of `latscope analyze`.
type analyzeOptions struct {
	json     bool
	app      stringList
	frame    regexpFlag
	task     string
	traceID  string
	whatIfs  whatIfs
	cpuSecs  float64
	clients  float64
	inProc   bool
	cores    float64
	workers  int
	pools    []queueing.PoolSpec
	infer    inferFlag
	minShare float64
	tree     bool
	partial  bool
	jfr      jfrOptions
	html     string
	pprofDir string
	cpuProf  string
	out      cli.ReportFile
}

// jfrOptions are the flags that only apply to JVM recordings (.jfr).
type jfrOptions struct {
	Handler      string   // frame that marks a request's thread time (--handler)
	Requests     int      // request count, when known (--requests)
	RequestsFrom string   // a latscope load results file to count requests from (--requests-from)
	App          []string // --app prefixes
	Predictions  []budget.Prediction
	// Only lists the flags given that need the latscope.Request events
	// (--what-if or --predict, --clients, --cores, --pool).
	Only []string
}

// jfrResult is a JVM recording's analysis.
type jfrResult struct {
	Res *budget.Result
	// Demands is Res as the prediction engine reads its demands (demands:
	// all thread CPU, a lock's hand-off gap), for analyze, compare and
	// predict alike; Res itself when the recording has no request budget.
	Demands *budget.Result
	// RequestCPU is the CPU seconds of the requests' threads while they
	// worked for a request, from execution samples; negative when unknown
	// (no latscope.Request events, or no sample period).
	RequestCPU float64
	// Churn is the recording's scheduler-churn analysis (package sched's
	// JVMChurn, fed the same events; docs/jfr-churn.md), the report's
	// scheduler section; nil for a Go trace, which pipeline analyses itself.
	Churn *sched.JVMReport
}

// readJFR reads a JFR recording into the same result as a Go trace, with
// the engine's reading of its demands and the request CPU, for analyze and
// predict. It is set by analyze_jfr.go.
var readJFR func(ctx context.Context, path string, o jfrOptions) (*jfrResult, error)

const analyzeExamples = `
examples:
  latscope analyze demo.trace
  latscope analyze --what-if overlap=callUpstream,queryDB --what-if remove=lockedSection demo.trace
  latscope analyze --clients 20 --pool 10 --what-if remove=callUpstream demo.trace
  latscope analyze --json --cpu-seconds 0.171 demo.trace
  curl -s localhost:6060/debug/pprof/trace?seconds=5 | latscope analyze -
  latscope analyze web-1.trace web-2.trace      several instances, by request type
  latscope analyze --json /var/tmp/snapshots    every *.trace in the directory
  latscope analyze --json -o report.json demo.trace
`

func runAnalyze(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var o analyzeOptions
	fs := cli.NewFlagSet("analyze", "analyze [flags] TRACE...|DIR", stderr)
	fs.BoolVar(&o.json, "json", false, "print JSON (schema: docs/json.md)")
	fs.Var(&o.app, "app", "package-path `PREFIX` of your code (repeatable); default: anything outside the standard library and known infrastructure")
	fs.Var(&o.frame, "frame", "show only terms with a frame on their call path that matches `REGEX`")
	fs.StringVar(&o.task, "task", "", "show only requests of task type `NAME`")
	fs.StringVar(&o.traceID, "trace-id", "", "show only the requests of the trace `ID` (32 hex digits, as a tracing UI shows it): the agent's OpenTelemetry bridge, gRPC interceptors and HTTP middleware log it; the report lists the slowest requests' trace IDs")
	fs.Var(o.whatIfs.flag("what-if"), "what-if", "what-if `SPEC` (repeatable; alias --predict): remove=TERM, scale=TERM:FACTOR or overlap=TERM,TERM change the timeline (TERM is any frame on a call path, GetUser, or a run of them, GetUser>query); pool=SIZE|NAME:SIZE, cores=N, clients=N, workers=N change the queueing model's inputs. Each is predicted by the queueing model where a queue (a pool, a lock given by --pool NAME:1, the CPUs) is in play, else by the timeline simulation, with its method and a 95 % interval")
	fs.Var(o.whatIfs.flag("predict"), "predict", "the same as --what-if `SPEC`")
	fs.BoolVar(&o.tree, "tree", false, "also print the waits rolled up by call path")
	floatVar(fs.FlagSet, &o.cpuSecs, "cpu-seconds", -1, 0, maxCPUSeconds, "process CPU time (utime+stime) in `SECONDS` over the trace window from an independent counter, for the cross-check (default: the counter latscope's agent logs into the trace, when it has one)")
	floatVar(fs.FlagSet, &o.clients, "clients", 0, 0, maxClients, "closed-model clients `N` for throughput predictions (default: estimated from the trace)")
	fs.BoolVar(&o.inProc, "clients-in-process", false, clientsInProcessUsage)
	floatVar(fs.FlagSet, &o.cores, "cores", 0, 0, maxCores, "CPU cores `N` available to the service (default: GOMAXPROCS in the trace)")
	intVar(fs.FlagSet, &o.workers, "workers", 0, 0, queueing.MaxExactPopulation, "the server's worker threads `N` for the queueing model: at most N requests inside at once, the rest wait in its queue, outside the request (default: from a JVM recording whose executor says, io.latscope.ServerQueue; else none)")
	fs.Var(&poolFlag{pools: &o.pools}, "pool", "a pool of `SIZE` (repeatable): a database/sql, pgxpool or puddle pool, recognised by its acquire wait, which also caps the predicted throughput (default: no cap); or NAME:SIZE, a pool, semaphore or lock (SIZE 1) named by the frame that acquires it, for the queueing model")
	fs.Var(&o.infer, "infer", "where requests come from: auto (tasks, else inferred from net/http and grpc-go server goroutines), tasks, http (inferred only)")
	floatVar(fs.FlagSet, &o.minShare, "min-share", 0.5, 0, 100, "fold terms under this share of the mean (`PERCENT`) into one row in text output")
	fs.BoolVar(&o.partial, "partial", false, "analyse a truncated trace up to where it breaks, with a warning, instead of failing")
	fs.StringVar(&o.jfr.Handler, "handler", "", "JVM recordings without latscope.Request events (docs/jfr.md): the handler `FRAME` (e.g. DemoController.handle) whose threads' events are request time")
	intVar(fs.FlagSet, &o.jfr.Requests, "requests", 0, 0, maxRequests, "JVM recordings without latscope.Request events: the number `N` of requests in the recording (with them, a cross-check)")
	fs.StringVar(&o.jfr.RequestsFrom, "requests-from", "", "JVM recordings without latscope.Request events: count requests from a latscope load results `FILE` (with them, a cross-check)")
	fs.StringVar(&o.html, "html", "", "also write a self-contained HTML report to `FILE`")
	fs.StringVar(&o.pprofDir, "pprof", "", "also write pprof profiles (wall, off-CPU, critical path) into `DIR`")
	fs.StringVar(&o.cpuProf, "cpu", "", "a pprof CPU `PROFILE` of the same window, for scheduler-overhead analysis")
	o.out.Register(fs)
	cli.UsageWith(fs, stderr, "analyze [flags] TRACE...|DIR", analyzeExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("want a trace file (or - for standard input), several, or a directory of snapshots; got none")
	}
	if isMany(fs.Args()) {
		return analyzeMany(ctx, stdout, fs.FlagSet, &o)
	}
	file := fs.Arg(0)
	isJFR := strings.HasSuffix(file, ".jfr")
	if o.traceID != "" {
		if _, err := budget.ParseTraceID(o.traceID); err != nil {
			return fmt.Errorf("--trace-id: %w", err)
		}
		if isJFR {
			return fmt.Errorf("--trace-id applies to Go execution traces only; %s is a JVM recording", file)
		}
	}
	if set := setFlags(fs.FlagSet, "handler", "requests", "requests-from"); !isJFR && len(set) > 0 {
		return fmt.Errorf("%s apply to JVM recordings (.jfr) only; %s is read as a Go execution trace", strings.Join(set, ", "), file)
	}
	if set := setFlags(fs.FlagSet, "partial"); isJFR && len(set) > 0 {
		return fmt.Errorf("%s applies to Go execution traces only; %s is read as a JVM recording", strings.Join(set, ", "), file)
	}
	if isJFR {
		o.jfr.Predictions = o.whatIfs.predictions()
		o.jfr.Only = setFlags(fs.FlagSet, "what-if", "predict", "clients", "clients-in-process", "cores", "pool", "workers")
	}
	pool, pools, err := analyzePools(o.pools, len(o.whatIfs.specs) > 0)
	if err != nil {
		return err
	}
	if err := checkInput(file, "trace file"); err != nil {
		return err
	}
	if o.cpuProf != "" {
		if isJFR {
			return fmt.Errorf("--cpu applies to Go execution traces only; %s is a JVM recording", file)
		}
		if err := checkInput(o.cpuProf, "CPU profile"); err != nil {
			return fmt.Errorf("--cpu: %w", err)
		}
	}
	out := newExtras(&o, file)
	if err := out.set.Check(); err != nil { // before the analysis, which may take long
		return err
	}
	if err := o.out.Check([]string{file, o.cpuProf, o.jfr.RequestsFrom}, out.set.Paths()); err != nil {
		return err
	}
	opts := budget.DefaultOptions
	opts.Rules.App = o.app
	if len(o.app) == 0 && !isJFR {
		mod, err := capturedModule(file)
		if err != nil {
			fmt.Fprintf(stderr, "analyze: warning: %v; the trace's own log, if any, names the main module\n", err)
		}
		opts.Rules.Module = mod
	}
	opts.Infer = o.infer.mode
	opts.TraceID = o.traceID
	opts.Predictions = o.whatIfs.predictions()
	in := render.Inputs{File: file, CPUSeconds: o.cpuSecs, Clients: o.clients, ClientsInProcess: o.inProc, Cores: o.cores, Workers: o.workers, Pool: pool, Pools: pools,
		Specs: o.whatIfs.engine(), Task: o.task, Frame: o.frame.re, MinShare: o.minShare, Tree: o.tree, App: o.app}
	var tr *pipeline.Report
	if isJFR {
		tr, err = analyzeRecording(ctx, file, o.jfr, o.app, in)
	} else {
		tr, err = analyzeTrace(ctx, file, opts, o.partial, o.cpuProf, in)
	}
	if err != nil {
		return err
	}
	if err := tr.Unmatched(); err != nil {
		return err
	}
	if err := tr.Report.WhatIfErr(); err != nil {
		return err
	}
	opts.Rules.Module = tr.Result.Info.Module // the module the trace named, for the pprof export too
	// The output files fail alone: the text or JSON report is written
	// whatever became of them, and their error is returned after it.
	extraErr := out.write(&o, opts, tr.Report, tr.Result)
	if err := o.out.Write(stdout, func(w io.Writer) error { return tr.Write(w, o.json) }); err != nil {
		return err
	}
	if extraErr != nil {
		return extraErr
	}
	return tr.Refusal()
}

// analyzeRecording reads a JVM recording into the same report as a trace.
func analyzeRecording(ctx context.Context, file string, o jfrOptions, app []string, in render.Inputs) (*pipeline.Report, error) {
	if readJFR == nil {
		return nil, errors.New("this build cannot read JVM recordings")
	}
	o.App = app
	r, err := readJFR(ctx, file, o)
	if err != nil {
		return nil, err
	}
	if in.CPUSeconds < 0 && r.RequestCPU >= 0 {
		in.CPUSeconds = r.RequestCPU // the requests' threads' samples: a finding says so
	}
	if in.Pool > 0 && !slices.ContainsFunc(r.Res.Terms, budget.IsPoolWait) {
		return nil, fmt.Errorf("--pool %d: %s has no pool wait (a park beneath a known pool, a Semaphore.acquire or a blocking queue's take/poll, docs/jfr.md): nothing to cap", in.Pool, file)
	}
	in.Demands = r.Demands
	if len(in.Specs) > 0 { // the engine's pools: --pool SIZE is the pool the recording waits for
		if in.Pools, err = jvmPools(r.Res, in.Pools); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return pipeline.FromRecording(r.Res, r.Churn, in)
}

// analyzePools splits --pool: the size of the pool recognised by its
// acquire wait (database/sql, pgxpool, puddle), given by SIZE alone, which
// caps the closed model's throughput (0: none), and the pools the queueing
// model takes (SIZE 0, no pool, left out). Only one pool can go by SIZE
// alone: the model would see the same waits twice. A named pool without a
// what-if would size nothing: refused.
func analyzePools(pools []queueing.PoolSpec, whatIfs bool) (int, []queueing.PoolSpec, error) {
	size, unnamed := 0, 0
	var model []queueing.PoolSpec
	for _, p := range pools {
		if p.Name == "" {
			unnamed++
			size = p.Size
		} else if !whatIfs {
			return 0, nil, fmt.Errorf("--pool %s:%d: a pool named by its frame sizes the queueing model of the what-ifs, and no --what-if is given (--pool SIZE alone caps the throughput)", p.Name, p.Size)
		}
		if p.Size > 0 {
			model = append(model, p)
		}
	}
	if unnamed > 1 {
		return 0, nil, fmt.Errorf("--pool given %d times by SIZE alone: one pool is recognised by its acquire wait; name the others by the frame that acquires them (--pool NAME:SIZE)", unnamed)
	}
	return size, model, nil
}

// setFlags returns the names (as --name) of those of names that were given
// on the command line.
func setFlags(fs *flag.FlagSet, names ...string) []string {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(names, f.Name) {
			set = append(set, "--"+f.Name)
		}
	})
	return set
}

// analyzeFile runs the analyser over one trace file ("-" is standard input).
func analyzeFile(ctx context.Context, name string, opts budget.Options, partial bool) (*budget.Result, error) {
	res, err := analysis.File(ctx, name, opts, partial)
	return res, partialHint(err)
}

// partialHint says, on a trace that broke off after readable records, that
// --partial analyses what came before.
func partialHint(err error) error {
	var de *analysis.DamagedError
	if errors.As(err, &de) {
		return fmt.Errorf("%w (--partial analyses what came before)", err)
	}
	return err
}

// extras are analyze's output files, --html and --pprof, written all or
// nothing: both complete, or neither (previous files stay as they were).
type extras struct {
	set   atomicfile.Set
	page  *htmlreport.Page
	pprof []func(io.Writer) error
}

// newExtras plans the output files the flags ask for; none may be an input.
func newExtras(o *analyzeOptions, inputs ...string) *extras {
	x := &extras{}
	x.set.Inputs(inputs...)
	x.set.Inputs(o.cpuProf)
	if o.html != "" {
		x.set.Add(o.html, func(w io.Writer) error { return x.page.Write(w) })
	}
	if o.pprofDir != "" {
		x.set.Dir(o.pprofDir)
		for i, name := range pprofexport.Files {
			x.set.Add(filepath.Join(o.pprofDir, name), func(w io.Writer) error { return x.pprof[i](w) })
		}
	}
	return x
}

// write builds the HTML report and pprof profiles and writes them. A panic
// while building or writing them is an error naming the outputs, so that
// the report on standard output is still written.
func (x *extras) write(o *analyzeOptions, opts budget.Options, rep *render.Report, res *budget.Result) (err error) {
	if len(x.set.Paths()) == 0 {
		return nil
	}
	defer recoverOutput(&err, strings.Join(x.set.Paths(), ", "))
	if o.html != "" {
		hopts := htmlreport.DefaultOptions
		hopts.MinShare = o.minShare
		if x.page, err = htmlreport.Build(rep, res, hopts); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if o.pprofDir != "" {
		popts := pprofexport.DefaultOptions
		popts.Rules, popts.Task = opts.Rules, o.task
		if x.pprof, err = pprofexport.Writers(res, popts); err != nil {
			return fmt.Errorf("--pprof: %w", err)
		}
	}
	return x.set.Commit()
}

// checkInput refuses an input path that is a directory, before a reader
// mistakes it for an empty file. what names the input in the error.
func checkInput(path, what string) error {
	if path == "-" {
		return nil
	}
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory, not a %s", path, what)
	}
	return nil // a missing file is the reader's to report
}

// capturedModule is the main module that latscope capture recorded in the
// capture.json beside file, when file is that capture's trace; "" otherwise
// (the trace's own log, if any, then names it). A capture.json that is there
// but cannot be read is an error the caller reports as a warning.
func capturedModule(file string) (string, error) {
	dir := filepath.Dir(file)
	if filepath.Base(file) != capture.TraceFile {
		return "", nil
	}
	if _, err := os.Stat(filepath.Join(dir, capture.MetaFile)); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	m, err := capture.ReadMeta(dir)
	if err != nil {
		return "", err
	}
	if m.Trace.Name != capture.TraceFile {
		return "", nil
	}
	return m.MainModule, nil
}

// isMany reports whether analyze's arguments ask for the aggregate of
// several traces: more than one, or a directory.
func isMany(args []string) bool {
	if len(args) > 1 {
		return true
	}
	st, err := os.Stat(args[0])
	return err == nil && st.IsDir()
}

// perTraceFlags are the flags that need one trace: their findings come
// from one trace's timelines and counters, which do not add across traces.
var perTraceFlags = []string{"trace-id", "what-if", "predict", "clients", "clients-in-process", "cores", "workers", "pool", "cpu-seconds", "cpu", "frame", "tree", "pprof", "handler", "requests", "requests-from"}

// analyzeMany analyses several traces, or a directory of snapshots, one at
// a time and prints their aggregate by request type, with a row per
// instance (pipeline.Many).
func analyzeMany(ctx context.Context, stdout io.Writer, fs *flag.FlagSet, o *analyzeOptions) error {
	if set := setFlags(fs, perTraceFlags...); len(set) > 0 {
		return fmt.Errorf("%s apply to one trace at a time: predictions, the CPU cross-check, call-path filters and the pprof profiles use one trace's timelines, which do not add across traces; analyze that trace alone", strings.Join(set, ", "))
	}
	files, err := pipeline.Inputs(fs.Args())
	if err != nil {
		return err
	}
	for _, f := range files {
		switch {
		case f == "-":
			return errors.New("- (standard input) can only be analysed alone, not with other traces")
		case strings.HasSuffix(f, ".jfr"):
			return fmt.Errorf("%s: JVM recordings are analysed one at a time, not aggregated with other traces", f)
		}
	}
	var page *htmlreport.Page
	var out atomicfile.Set
	out.Inputs(files...)
	if o.html != "" {
		out.Add(o.html, func(w io.Writer) error { return page.Write(w) })
	}
	if err := out.Check(); err != nil { // before the analyses, which may take long
		return err
	}
	if err := o.out.Check(files, out.Paths()); err != nil {
		return err
	}
	opts := budget.DefaultOptions
	opts.Rules.App = o.app
	opts.Infer = o.infer.mode
	m, err := pipeline.Many(ctx, files, pipeline.ManyOptions{
		Budget: opts, Partial: o.partial,
		Report: render.Inputs{CPUSeconds: -1, MinShare: o.minShare, App: o.app},
		Many:   render.ManyOptions{Task: o.task, MinShare: o.minShare},
	})
	if err != nil {
		return partialHint(err)
	}
	var htmlErr error
	if o.html != "" {
		htmlErr = func() (err error) {
			defer recoverOutput(&err, o.html)
			if page, err = htmlreport.BuildMany(m); err != nil {
				return fmt.Errorf("--html: %w", err)
			}
			return out.Commit()
		}()
	}
	err = o.out.Write(stdout, func(w io.Writer) error {
		if o.json {
			return m.WriteJSON(w)
		}
		return m.WriteText(w)
	})
	if err == nil {
		err = htmlErr
	}
	if err == nil && len(m.Groups) == 0 {
		err = fmt.Errorf("refused: none of the %d traces holds a request", len(m.Traces))
	}
	return err
}

// recoverOutput turns a panic while building or writing output files into
// an error that names them, so that a bug in one writer costs that file
// only, never the report on standard output. Deferred by the caller.
func recoverOutput(err *error, files string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s not written: internal error in its writer (a bug; please report it): %v", files, r)
	}
}
