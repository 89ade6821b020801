package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/whatif"
)

func init() {
	cli.Register("predict", "what-ifs solved on the closed queueing network measured from a trace or a JVM recording (.jfr): latency, throughput, utilisation, where the bottleneck moves", runPredict)
}

const predictSynopsis = "predict [flags] TRACE"

const predictExamples = `
what-ifs (--what-if, repeatable):
  remove=TERM  scale=TERM:FACTOR  overlap=TERM,TERM   as in analyze and compare --what-if
  pool=NAME:SIZE (or pool=SIZE)  cores=N  clients=N  rate=R (open workloads)  workers=N

examples:
  latscope predict --clients 20 --pool withConn:10 --what-if remove=callUpstream demo.trace
  latscope predict --clients 20 --pool 10 --what-if overlap=callUpstream,queryDB --what-if pool=20 demo.trace
  latscope predict --json --clients 16 --cores 2 --what-if clients=32 demo.trace
  latscope predict --open --what-if rate=400 --what-if cores=1 demo.trace
  latscope predict --json -o model.json --what-if cores=1 demo.trace
`

func runPredict(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var (
		asJSON  bool
		app     stringList
		task    string
		clients float64
		rate    float64
		open    bool
		inProc  bool
		cores   float64
		workers int
		pools   []queueing.PoolSpec
		whatIfs whatIfs
		jfr     jfrOptions
		out     cli.ReportFile
	)
	fs := cli.NewFlagSet("predict", predictSynopsis, stderr)
	fs.BoolVar(&asJSON, "json", false, "print JSON (schema: docs/json.md, \"predict\")")
	fs.Var(&app, "app", "package-path `PREFIX` of your code (repeatable), as in analyze")
	fs.StringVar(&task, "task", "", "request type `NAME` to model (default: the one with most requests)")
	floatVar(fs.FlagSet, &clients, "clients", 0, 0, queueing.MaxExactPopulation, "closed-model clients `N` (default: estimated from the trace by Little's law, counting the requests that waited before they began where measured: the server's queue, a CPU)")
	fs.BoolVar(&inProc, "clients-in-process", false, clientsInProcessUsage)
	fs.BoolVar(&open, "open", false, "model an open workload: requests arrive at the trace's throughput whatever the latency (many independent users), instead of closed-loop clients")
	floatVar(fs.FlagSet, &rate, "rate", 0, 0, 1e7, "open workload: requests arrive at `R` per second (implies --open)")
	floatVar(fs.FlagSet, &cores, "cores", 0, 0, maxCores, "CPU cores `N` available to the service (default: GOMAXPROCS in the trace)")
	intVar(fs.FlagSet, &workers, "workers", 0, 0, queueing.MaxExactPopulation, "the server's worker threads `N` for the queueing model: at most N requests inside at once, the rest wait in its queue, outside the request (default: from a JVM recording whose executor says, io.latscope.ServerQueue; else none)")
	fs.Var(&poolFlag{pools: &pools, min: 1}, "pool", "a pool `NAME:SIZE` or SIZE (repeatable): NAME is the frame that acquires it (a semaphore, a buffered channel, a mutex as NAME:1); SIZE alone sizes a database/sql, pgxpool or puddle pool")
	fs.Var(whatIfs.flag("what-if"), "what-if", "what-if `SPEC` (repeatable): remove=TERM, scale=TERM:FACTOR, overlap=TERM,TERM, pool=NAME:SIZE (or pool=SIZE), cores=N, clients=N, rate=R, workers=N")
	fs.StringVar(&jfr.Handler, "handler", "", "JVM recordings: the handler `FRAME` whose threads' events are request time, as in analyze")
	intVar(fs.FlagSet, &jfr.Requests, "requests", 0, 0, maxRequests, "JVM recordings: the number `N` of requests in the recording")
	fs.StringVar(&jfr.RequestsFrom, "requests-from", "", "JVM recordings: count requests from a latscope load results `FILE`")
	out.Register(fs)
	cli.UsageWith(fs, stderr, predictSynopsis, predictExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("want exactly one trace file (or - for standard input), got %d arguments", fs.NArg())
	}
	file := fs.Arg(0)
	if err := checkInput(file, "trace file"); err != nil {
		return err
	}
	if err := out.Check([]string{file, jfr.RequestsFrom}, nil); err != nil {
		return err
	}
	isJFR := strings.HasSuffix(file, ".jfr")
	if set := setFlags(fs.FlagSet, "handler", "requests", "requests-from"); !isJFR && len(set) > 0 {
		return fmt.Errorf("%s apply to JVM recordings (.jfr) only; %s is read as a Go execution trace", strings.Join(set, ", "), file)
	}
	opts := budget.DefaultOptions
	opts.FixPotential = false
	opts.Rules.App = app
	if len(app) == 0 && !isJFR {
		if mod, err := capturedModule(file); err != nil {
			fmt.Fprintf(stderr, "predict: warning: %v; the trace's own log, if any, names the main module\n", err)
		} else {
			opts.Rules.Module = mod
		}
	}
	// every timeline what-if is simulated: the engine predicts it by the
	// timeline where no queue is in play, and the model takes an overlap's
	// saving from it
	opts.Predictions = whatIfs.predictions()
	var res *budget.Result
	var err error
	switch {
	case isJFR && readJFR == nil:
		return fmt.Errorf("%s: this build cannot read JVM recordings", file)
	case isJFR: // the same model from a JVM recording (the timeline in request mode only)
		jfr.App = app
		jfr.Predictions = opts.Predictions
		var r *jfrResult
		if r, err = readJFR(ctx, file, jfr); err == nil {
			res = r.Demands // the engine's reading, as analyze and compare give it
		}
	default:
		res, err = analysis.File(ctx, file, opts, false)
	}
	if err != nil {
		return err
	}
	if pools, err = jvmPools(res, pools); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if (open || rate > 0) && clients > 0 {
		return fmt.Errorf("--clients applies to the closed model; --open and --rate model an open workload")
	}
	p, err := queueing.Predict(res, queueing.Inputs{Task: task, Clients: clients, Cores: cores, Pools: pools, Open: open, Rate: rate, Workers: workers, ClientsInProcess: inProc}, whatIfs.all())
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	engine, err := enginePredictions(res, p, whatif.Inputs{Clients: clients, Cores: cores, Pools: pools, Open: open, Rate: rate, Workers: workers, ClientsInProcess: inProc}, whatIfs.engine())
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return out.Write(stdout, func(w io.Writer) error {
		if asJSON {
			e := json.NewEncoder(w)
			e.SetIndent("", "  ")
			return e.Encode(predictJSON(p, engine))
		}
		return writePrediction(w, p, engine)
	})
}

// enginePredictions are the one engine's predictions (whatif.Evaluate) of
// specs for the request type the model was built for, in order, as analyze
// reports them: by the queueing model where a queue is in play, else by
// the timeline simulation, with the method, the reason and a 95 % interval.
// nil when a timeline what-if has no simulation to stand on (a JVM
// recording without the library's request events): the model's table is
// then the only answer.
func enginePredictions(res *budget.Result, p *queueing.Prediction, in whatif.Inputs, specs []whatif.Spec) ([]render.Prediction, error) {
	var g *budget.Group
	for _, x := range res.Groups {
		if x.Name == p.Model.Group {
			g = x
		}
	}
	if g == nil || len(g.Predictions) != len(whatif.Predictions(specs)) {
		return nil, nil
	}
	ev, err := whatif.Evaluate(res, g.Name, in, specs)
	if err != nil {
		return nil, err
	}
	out := make([]render.Prediction, len(ev.Outcomes))
	for i, o := range ev.Outcomes {
		out[i] = render.FromOutcome(o, g.Latency.Mean)
	}
	return out, nil
}

// predictJSON is predict's JSON: the model's prediction, each outcome with
// the engine's prediction beside it (analyze's predictions[] entry; absent
// when the engine gave none).
func predictJSON(p *queueing.Prediction, engine []render.Prediction) any {
	type outcome struct {
		queueing.Outcome
		Prediction *render.Prediction `json:"prediction,omitempty"`
	}
	out := struct {
		*queueing.Prediction
		Outcomes []outcome `json:"outcomes"`
	}{Prediction: p, Outcomes: []outcome{}}
	for i, o := range p.Outcomes {
		x := outcome{Outcome: o}
		if i < len(engine) {
			x.Prediction = &engine[i]
		}
		out.Outcomes = append(out.Outcomes, x)
	}
	return out
}

// writePrediction prints the model, its validation and each what-if: the
// engine's prediction (engine, in the order of p.Outcomes; nil for none)
// and the model's states.
func writePrediction(w io.Writer, p *queueing.Prediction, engine []render.Prediction) error {
	m := p.Model
	var b strings.Builder
	est := ""
	if m.ClientsEstimated {
		est = " (estimated)"
	}
	if m.Rate > 0 {
		fmt.Fprintf(&b, "queueing model of %q (%s): %d requests, arriving at %.6g per second, scheduling latency %.3g ms\n",
			m.Group, p.Method, m.Requests, m.Rate, m.WakeupMs)
	} else {
		fmt.Fprintf(&b, "queueing model of %q (%s): %d requests, %d clients%s, think %.3g ms, scheduling latency %.3g ms\n",
			m.Group, p.Method, m.Requests, m.Clients, est, m.ThinkMs, m.WakeupMs)
	}
	for _, r := range m.Resources {
		servers := ""
		if r.Servers > 0 {
			servers = fmt.Sprintf(" ×%d", r.Servers)
		}
		fmt.Fprintf(&b, "  %-16s %-5s%-6s demand %8.3f ms  measured wait %8.3f ms\n", r.Name, r.Kind, servers, r.DemandMs, r.WaitMs)
		if r.Kind == queueing.CPU && m.OutsideCPUMs > 0 {
			fmt.Fprintf(&b, "  %-16s (%.3g ms of it is the process's CPU outside any request, per request: the server's reading and writing, GC)\n", "", m.OutsideCPUMs)
		}
		if r.Kind == queueing.CPU && m.OthersShare > 0 {
			fmt.Fprintf(&b, "  %-16s (charged by 1 / (1 − %.2f): the machine's other processes used %.0f %% of its cores, and the requests waited %.3g ms for a CPU where the service's own load explains %.3g ms; docs/method.md §7)\n", "", m.OthersShare, 100*m.OthersGiven, r.WaitMs, m.OwnWaitMs)
		}
		if r.Kind == queueing.CPU && m.BeforeMs >= whatif.QueueShare*m.MeasuredMeanMs {
			fmt.Fprintf(&b, "  %-16s (and %.3g ms per request waiting for a CPU before the request began: in the CPU's queue, outside the request)\n", "", m.BeforeMs)
		}
		if r.Kind == queueing.CPU && m.ThinkQueueMs > 0 {
			fmt.Fprintf(&b, "  %-16s (and the clients' %.3g ms per request between the requests, in the process: in the CPU's queue, not the think time)\n", "", m.ThinkQueueMs)
		}
		if r.HoldCPUMs > 0 && r.HoldCPUMs >= r.DemandMs/10 { // a hold that is largely CPU
			fmt.Fprintf(&b, "  %-16s (%.3g ms of the hold is CPU: with the CPU busier the hold may grow, which the model does not predict; docs/method.md §7)\n", "", r.HoldCPUMs)
		}
	}
	if m.Workers > 0 {
		fmt.Fprintf(&b, "  %-16s %-5s%-6s (%s): at most %d requests inside, the rest wait outside the request; measured wait %.3f ms\n",
			"server workers", "", fmt.Sprintf(" ×%d", m.Workers), m.WorkersFrom, m.Workers, m.ServerQueueMs)
	} else if m.ServerQueueMs > 0 {
		fmt.Fprintf(&b, "  (the requests waited %.3g ms each in the server's queue before they began, kept in the think time: give --workers N to model the server's workers)\n", m.ServerQueueMs)
	}
	v := p.Validation
	fmt.Fprintf(&b, "as recorded: model %.3f ms %.1f rps, measured %.3f ms %.1f rps (residual %+.1f %% / %+.1f %%)\n",
		v.ModelMeanMs, v.ModelRPS, v.MeasuredMeanMs, v.MeasuredRPS, v.MeanResidual, v.RPSResidual)
	if m.Workers > 0 {
		fmt.Fprintf(&b, "  waiting for a worker, outside the request: model %.3f ms, measured %.3f ms\n", v.ModelServerQueueMs, v.MeasuredServerQueueMs)
	}
	// the wait before the request is printed where it reaches the share of
	// the mean at which a queue is in play (whatif.QueueShare); JSON has it
	// always
	for i, o := range p.Outcomes {
		fmt.Fprintf(&b, "\n%s: %s\n", o.Spec, o.Change)
		if i < len(engine) {
			writeEngine(&b, engine[i])
		}
		if o.After.Unstable != "" {
			fmt.Fprintf(&b, "  unstable: %s; no mean to predict\n", o.After.Unstable)
			continue
		}
		fmt.Fprintf(&b, "  mean %.3f → %.3f ms, throughput %.1f → %.1f rps, p99 %s\n", o.Before.MeanMs, o.After.MeanMs, o.Before.RPS, o.After.RPS, o.P99Note)
		for i, u := range o.After.Resources {
			bu := o.Before.Resources[i]
			if u.Kind == queueing.Delays {
				continue
			}
			hold := ""
			if u.Kind == queueing.Pool && u.DemandMs != bu.DemandMs {
				hold = fmt.Sprintf(", hold %.3f → %.3f ms", bu.DemandMs, u.DemandMs)
			}
			fmt.Fprintf(&b, "  %-16s busy %5.1f %% → %5.1f %%, queue %.3f → %.3f ms%s\n", u.Name, 100*bu.Util, 100*u.Util, bu.WaitMs, u.WaitMs, hold)
		}
		if max(o.Before.BeforeMs, o.After.BeforeMs) >= whatif.QueueShare*m.MeasuredMeanMs {
			where := "before the request began (outside the request"
			if m.ThinkQueueMs > 0 {
				where = "outside the request (before it began, and the clients' think time in the process"
			}
			fmt.Fprintf(&b, "  %-16s %.3f → %.3f ms waiting for a CPU %s; its share of the CPU's queue and scheduling latency)\n", "", o.Before.BeforeMs, o.After.BeforeMs, where)
		}
		if o.After.Workers > 0 {
			fmt.Fprintf(&b, "  %-16s busy %5.1f %% → %5.1f %%, queue %.3f → %.3f ms (outside the request)\n", "server workers", 100*o.Before.WorkersBusy, 100*o.After.WorkersBusy, o.Before.ServerQueueMs, o.After.ServerQueueMs)
		}
		if o.Moves != "" {
			fmt.Fprintf(&b, "  %s\n", o.Moves)
		}
		if o.AtRisk != nil {
			fmt.Fprintf(&b, "  at risk: %s\n", o.AtRisk.Text)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeEngine prints the engine's prediction of one what-if in analyze's
// words: "SPEC, by the METHOD: WHY", then its mean, 95 % interval, p99 and
// throughput.
func writeEngine(b *strings.Builder, e render.Prediction) {
	termsafe.Fprintf(b, "  %s, by the %s: %s\n", e.Spec, e.Method, e.Why)
	if e.Mean == 0 && e.Method == string(whatif.Queueing) {
		return // unstable: the reason says which station
	}
	interval, p99 := "", "n/a"
	if e.MeanLow != nil && e.MeanHigh != nil {
		interval = fmt.Sprintf(" (95 %% %.2f–%.2f)", e.MeanLow.Ms(), e.MeanHigh.Ms())
	}
	if e.P99 > 0 {
		p99 = fmt.Sprintf("%.2f ms", e.P99.Ms())
	}
	fmt.Fprintf(b, "  predicted mean %.2f ms%s, %+.1f %%, p99 %s, throughput %.1f rps\n", e.Mean.Ms(), interval, e.DeltaPct, p99, e.RPS)
}

// jvmPools names a pool given by size alone (--pool 6) in a JVM recording by
// the frame that acquires it: the application frame of the recording's pool
// wait (a park beneath a known pool, a Semaphore's acquire or a blocking
// queue's take, docs/jfr.md), so that the model finds its holds (the waits
// beneath that frame's hold, io.latscope.Holds) as it does for NAME:SIZE.
// analyze, compare and predict all name the engine's pools through it
// (issue #33 item 2). A Go trace's pools are returned as given: there SIZE
// alone is a database/sql, pgxpool or puddle pool the model recognises.
func jvmPools(res *budget.Result, pools []queueing.PoolSpec) ([]queueing.PoolSpec, error) {
	if !res.Info.JVM {
		return pools, nil
	}
	out := slices.Clone(pools)
	for i, p := range out {
		if p.Name != "" {
			continue
		}
		var frames []string
		for _, t := range res.Terms {
			if budget.IsPoolWait(t) && t.Frame != "" && !slices.Contains(frames, t.Frame) {
				frames = append(frames, t.Frame)
			}
		}
		switch len(frames) {
		case 0:
			return nil, fmt.Errorf("--pool %d: the recording has no pool wait (a park beneath a known pool, a Semaphore.acquire or a blocking queue's take/poll, docs/jfr.md): name the frame that acquires it, --pool NAME:%d", p.Size, p.Size)
		case 1:
			out[i].Name = frames[0]
		default:
			slices.Sort(frames)
			return nil, fmt.Errorf("--pool %d: the recording waits for %d pools (%s): name the one, --pool NAME:%d", p.Size, len(frames), strings.Join(frames, ", "), p.Size)
		}
	}
	return out, nil
}

// clientsInProcessUsage is --clients-in-process's help, in analyze,
// compare and predict.
const clientsInProcessUsage = "the closed model's clients run in the service's own process (a benchmark's load, an httptest server): their time between requests is the process's goroutines waiting for each other and for a CPU, which the queueing model takes as the CPU's queue outside the request (docs/method.md §7, \"Clients in the process\")"
