// Package seed is the lab scenario of the seed experiment (docs/method.md §1, §5): one
// endpoint with four segments — CPU, an upstream HTTP call, a PostgreSQL
// query behind a pool, a shared section under a mutex — run in three modes
// (serial, concurrent, fixed) under closed-model load, each mode traced in
// its measured window only. From the serial trace it predicts what the two
// fixes will do, then measures them, and checks the method's claims.
package seed

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/latscope/latscope/internal/httpurl"
	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/lab"
	"github.com/latscope/latscope/lab/upstream"
)

func init() {
	lab.Register(lab.Scenario{
		Name:    "seed",
		Summary: "the seed experiment: CPU profile vs wall clock, serial vs concurrent vs fixed, predictions checked against measurements",
		Needs:   []string{"postgres"},
		Run:     Run,
	})
}

// Modes run in this order; serial is the one predictions are made from.
var Modes = []string{"serial", "concurrent", "fixed"}

// Predictions made from the serial trace and from the concurrent trace.
var (
	SerialPredictions     = []string{"overlap=callUpstream,queryDB", "remove=sharedSection"}
	ConcurrentPredictions = []string{"remove=sharedSection"}
)

// ModeRun is one measured run of one mode.
type ModeRun struct {
	Mode     string         `json:"mode"`
	Run      int            `json:"run"`
	Load     LoadSummary    `json:"load"`
	CPUMs    float64        `json:"process_cpu_ms"`
	CPUPerMs float64        `json:"cpu_per_request_ms"`
	Trace    string         `json:"trace"`
	Profile  string         `json:"cpu_profile"`
	Report   *render.Report `json:"analysis"`
	window   *lab.Window
	// series are the per-request figures of the report's request type
	// (nil when they do not line up with it): the checks' intervals.
	series *series
}

// LoadSummary is the client side of a run.
type LoadSummary struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	RPS      float64 `json:"rps"`
	MeanMs   float64 `json:"mean_ms"`
	P50Ms    float64 `json:"p50_ms"`
	P90Ms    float64 `json:"p90_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
}

// Run runs the scenario.
func Run(ctx context.Context, env *lab.Env) (*lab.Outcome, error) {
	loadBefore := lab.LoadAverage()
	dbURL, stopDB, err := database(ctx, env)
	if err != nil {
		return nil, err
	}
	defer stopDB()
	up, err := upstream.Start(ctx, upstream.Options{Delay: 100 * time.Millisecond})
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	defer up.Close()
	env.Logf("upstream on %s (answers after 100 ms); PostgreSQL at %s", up.URL(), httpurl.Redact(dbURL))
	iters := 0
	var runs []*ModeRun
	total := len(Modes) * env.Profile.Runs
	for i, mode := range Modes {
		for r := 1; r <= env.Profile.Runs; r++ {
			step := i*env.Profile.Runs + r - 1
			env.Step(float64(step)/float64(total), fmt.Sprintf("%s run %d/%d", mode, r, env.Profile.Runs))
			mr, it, err := runMode(ctx, env, mode, r, up.URL(), dbURL, iters)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", mode, r, err)
			}
			iters = it
			runs = append(runs, mr)
		}
	}
	env.Step(1, "report")
	return outcome(env, runs, loadBefore)
}

// database returns the PostgreSQL to use: env.DBURL, or a private cluster.
func database(ctx context.Context, env *lab.Env) (string, func(), error) {
	if env.DBURL != "" {
		return env.DBURL, func() {}, nil
	}
	env.Logf("starting a private PostgreSQL cluster (initdb into a temporary directory)…")
	c, err := pgcluster.Start(ctx, pgcluster.Options{Log: env.Detail})
	if err != nil {
		return "", nil, fmt.Errorf("postgres: %w", err)
	}
	return c.URL(), func() { c.Stop() }, nil
}

var itersRE = regexp.MustCompile(`cpu_iters=(\d+)`)

// runMode starts the service in one mode, drives it with closed-model load,
// captures the measured window and analyses it.
func runMode(ctx context.Context, env *lab.Env, mode string, run int, upURL, dbURL string, iters int) (*ModeRun, int, error) {
	name := fmt.Sprintf("%s-%d", mode, run)
	p, err := lab.StartProcess(ctx, env, "svc-"+name, "serve", "--mode", mode, "--upstream", upURL, "--db-url", dbURL, "--cpu-iters", strconv.Itoa(iters))
	if err != nil {
		return nil, 0, err
	}
	defer p.Stop()
	if m := itersRE.FindStringSubmatch(p.Output()); m != nil {
		iters, _ = strconv.Atoi(m[1]) // the same CPU work in every mode
	}
	prof := env.Profile
	opts := loadgen.DefaultOptions
	opts.URL, opts.Clients, opts.Warmup, opts.Duration = p.URL()+"/work", prof.Clients, prof.Warmup, prof.Window
	var rep loadgen.Report
	loadDone := make(chan error, 1)
	go func() {
		loadDone <- loadgen.Run(ctx, opts, func(r loadgen.Result) { rep.Add(&r) })
	}()
	select {
	case <-time.After(prof.Warmup):
	case err := <-loadDone:
		return nil, 0, fmt.Errorf("load ended during warm-up: %v", err)
	}
	env.Logf("%s: warm-up done, tracing %s with CPU profiling…", name, prof.Window)
	w, err := lab.CaptureWindow(ctx, p, int(prof.Window/time.Second), env.Out, name)
	if err != nil {
		return nil, 0, err
	}
	if err := <-loadDone; err != nil {
		return nil, 0, fmt.Errorf("load: %w", err)
	}
	rep.Close()
	mr := &ModeRun{Mode: mode, Run: run, Load: summarize(&rep), CPUMs: units.Ms(w.CPU), Trace: rel(env.Out, w.Trace), Profile: rel(env.Out, w.Profile), window: w}
	if mr.Load.Errors > 0 {
		return nil, 0, fmt.Errorf("%d of %d requests failed (first: %v)", mr.Load.Errors, mr.Load.Requests+mr.Load.Errors, rep.TopErrors)
	}
	mr.Report, mr.series, err = analyse(ctx, w, mode, prof.Clients)
	if err != nil {
		return nil, 0, err
	}
	if n := mr.Report.Requests.Count; n > 0 {
		mr.CPUPerMs = units.Round3(mr.CPUMs / float64(n))
	}
	env.Logf("%s: %d requests, %.1f/s, mean %.1f ms, p99 %.1f ms; traced %d requests; process CPU %.0f ms",
		name, mr.Load.Requests, mr.Load.RPS, mr.Load.MeanMs, mr.Load.P99Ms, mr.Report.Requests.Count, mr.CPUMs)
	return mr, iters, nil
}

// analyse runs latscope's analysis on a captured window, and keeps the
// per-request series of the report's request type.
func analyse(ctx context.Context, w *lab.Window, mode string, clients int) (*render.Report, *series, error) {
	opts := budget.DefaultOptions
	specs := map[string][]string{"serial": SerialPredictions, "concurrent": ConcurrentPredictions}[mode]
	for _, s := range specs {
		p, err := budget.ParsePrediction(s)
		if err != nil {
			return nil, nil, err
		}
		opts.Predictions = append(opts.Predictions, p)
	}
	col := newCollector()
	opts.Each = col.each
	res, err := analysis.File(ctx, w.Trace, opts, false)
	if err != nil {
		return nil, nil, err
	}
	rep, err := render.Build(res, render.Inputs{File: w.Trace, CPUSeconds: w.CPU.Seconds(), Clients: float64(clients), Task: "request"})
	if err != nil {
		return nil, nil, err
	}
	var ser *series
	if len(rep.Groups) > 0 {
		for _, g := range res.Groups {
			if g.Name == rep.Groups[0].Name {
				ser = col.group(g)
			}
		}
	}
	return rep, ser, nil
}

func summarize(r *loadgen.Report) LoadSummary {
	l := r.Latency
	return LoadSummary{Requests: r.Requests, Errors: r.Errors, RPS: units.Round3(r.RPS), MeanMs: units.Ms(l.Mean), P50Ms: units.Ms(l.P50),
		P90Ms: units.Ms(l.P90), P99Ms: units.Ms(l.P99), MaxMs: units.Ms(l.Max)}
}

// rel returns path relative to dir, for the JSON.
func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
