package queues

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/whatif"
	"github.com/latscope/latscope/lab"
)

// Case is one scenario: the service's shape and the fix applied.
type Case struct {
	Name      string        `json:"name"`
	Cores     int           `json:"cores"` // GOMAXPROCS
	CPU       time.Duration `json:"cpu_ns"`
	DB        time.Duration `json:"db_ns"`
	Upstream  time.Duration `json:"upstream_ns"`
	Pool      int           `json:"pool"`
	Fix       string        `json:"fix"`       // the what-if, applied for real afterwards
	Saturates string        `json:"saturates"` // the resource the fix should saturate
}

// Cases are the two scenarios: the fix saturates the pool, or the CPU.
var Cases = []Case{
	{Name: "pool", Cores: 2, CPU: 500 * time.Microsecond, DB: 10 * time.Millisecond, Upstream: 30 * time.Millisecond, Pool: 4,
		Fix: "remove=callUpstream", Saturates: "withConn"},
	{Name: "cpu", Cores: 1, CPU: 3 * time.Millisecond, DB: 2 * time.Millisecond, Upstream: 40 * time.Millisecond, Pool: 64,
		Fix: "remove=callUpstream", Saturates: "CPU"},
}

// Config sets the run.
type Config struct {
	Clients []int         // closed-loop client counts
	Warm    time.Duration // before each window
	Window  time.Duration // measured window per run
	Cases   []Case
	// Command starts latscope-lab's `queues-serve` and `burn`
	// processes; required.
	Command Command
	// Burners is how many CPU burner processes run beside the lab (0 for
	// a host left to itself; `--loaded` is one per core).
	Burners int
}

// DefaultConfig is `latscope-lab queues`; ShortConfig is its reduced run.
var (
	DefaultConfig = Config{Clients: []int{6, 12}, Warm: time.Second, Window: 5 * time.Second, Cases: Cases}
	ShortConfig   = Config{Clients: []int{6, 12}, Warm: 300 * time.Millisecond, Window: time.Second, Cases: Cases}
)

// Tolerance is the acceptance bound on a prediction's error; Goal is the aim.
const (
	Tolerance = 5.0 // per cent
	Goal      = 2.0
)

// Run is one case at one client count.
type Run struct {
	Case       string              `json:"case"`
	Clients    int                 `json:"clients"`
	Before     Load                `json:"before"` // measured by the clients, while tracing
	After      Load                `json:"after"`  // the fix applied, re-measured
	Validation queueing.Validation `json:"validation"`
	// Method is how the one prediction engine (whatif.Evaluate, behind
	// analyze, compare and predict) predicted the fix, and Why why: the
	// queueing model where a queue is in play, anchored on the trace's
	// simulated timeline. Predicted is the model's state after the fix
	// (the zero State when the engine used the timeline alone).
	Method    whatif.Method  `json:"method"`
	Why       string         `json:"why,omitempty"`
	Predicted queueing.State `json:"predicted"`
	Moves     string         `json:"moves,omitempty"`
	// PredictedClientMs is the mean latency the lab's clients should see
	// after the fix: the model's cycle, clients / throughput, since they
	// have no think time of their own. It adds to the request's task the
	// time outside it (the model's think time and the server's CPU outside
	// any request: the loopback network, reading and writing, the
	// client's own work).
	PredictedClientMs float64 `json:"predicted_client_mean_ms"`
	// PredictedRPS is the engine's throughput after the fix (the closed
	// model's clients over the anchored cycle); Predicted.RPS is the
	// queueing model's own, for comparison.
	PredictedRPS float64         `json:"predicted_rps"`
	MeanErr      float64         `json:"mean_error_pct"`
	RPSErr       float64         `json:"rps_error_pct"`
	Pass         bool            `json:"pass"`
	Cause        string          `json:"cause,omitempty"` // why a miss happened, when one did
	AfterModel   *queueing.Model `json:"after_model,omitempty"`
}

// Report is the lab's outcome.
type Report struct {
	RoundsPerMs float64 `json:"sha256_rounds_per_ms"`
	Burners     int     `json:"burners"` // CPU burner processes beside the lab
	Runs        []Run   `json:"runs"`
	Passed      int     `json:"passed"`
}

// Execute runs every case at every client count. log gets progress.
func Execute(ctx context.Context, cfg Config, log io.Writer) (*Report, error) {
	if cfg.Command == nil {
		return nil, fmt.Errorf("no command to start the service processes")
	}
	rep := &Report{RoundsPerMs: calibrate(), Burners: cfg.Burners}
	if cfg.Burners > 0 {
		b, err := lab.StartBurners(ctx, cfg.Burners, cfg.Command)
		if err != nil {
			return nil, err
		}
		defer b.Stop()
	}
	for _, c := range cfg.Cases {
		for _, n := range cfg.Clients {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			r, err := runCase(ctx, cfg, c, n, rep.RoundsPerMs)
			if err != nil {
				return rep, fmt.Errorf("case %s, %d clients: %w", c.Name, n, err)
			}
			fmt.Fprintf(log, "%s\n", r.line())
			if r.Pass {
				rep.Passed++
			}
			rep.Runs = append(rep.Runs, *r)
		}
	}
	return rep, nil
}

func runCase(ctx context.Context, cfg Config, c Case, n int, rounds float64) (*Run, error) {
	pools := []queueing.PoolSpec{{Name: "withConn", Size: c.Pool}}
	in := queueing.Inputs{Task: "request", Clients: float64(n), Cores: float64(c.Cores), Pools: pools}
	spec, err := whatif.ParseSpec(c.Fix)
	if err != nil {
		return nil, err
	}
	r := &Run{Case: c.Name, Clients: n}
	before := ServeConfig{Cores: c.Cores, CPU: c.CPU, DB: c.DB, Upstream: c.Upstream, Pool: c.Pool, Rounds: rounds}
	res, load, err := traced(ctx, cfg, before, n, "before", spec)
	if err != nil {
		return nil, err
	}
	r.Before = load
	ev, err := whatif.Evaluate(res, in.Task, whatif.Inputs{Clients: in.Clients, Cores: in.Cores, Pools: pools}, []whatif.Spec{spec})
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	if ev.Validation == nil {
		return nil, fmt.Errorf("predict: no queueing model of the before trace: %s", ev.Unbuilt)
	}
	o := ev.Outcomes[0]
	if !(o.RPS > 0) {
		return nil, fmt.Errorf("predict %s: no throughput predicted (%s: %s)", c.Fix, o.Method, o.Why)
	}
	r.Validation, r.Method, r.Why, r.Moves = *ev.Validation, o.Method, o.Why, o.Moves
	if o.After != nil {
		r.Predicted = *o.After
	}
	after := before
	after.Upstream = 0 // the fix, really applied
	ares, aload, err := traced(ctx, cfg, after, n, "after")
	if err != nil {
		return nil, err
	}
	r.After = aload
	r.PredictedRPS = o.RPS
	r.PredictedClientMs = 1000 * float64(n) / o.RPS
	r.MeanErr = errPct(r.PredictedClientMs, aload.MeanMs)
	r.RPSErr = errPct(o.RPS, aload.RPS)
	r.Pass = math.Abs(r.MeanErr) <= Tolerance && math.Abs(r.RPSErr) <= Tolerance
	if am, err := queueing.Build(ares, in); err == nil {
		r.AfterModel = am
	}
	if !r.Pass || math.Abs(r.MeanErr) > Goal || math.Abs(r.RPSErr) > Goal {
		r.Cause = cause(r)
	}
	return r, nil
}

// traced runs the service sc under n clients while recording a trace of
// the window, and analyses it, simulating the timeline what-ifs specs.
func traced(ctx context.Context, cfg Config, sc ServeConfig, n int, name string, specs ...whatif.Spec) (*budget.Result, Load, error) {
	tr, load, err := measure(ctx, cfg.Command, sc, n, cfg.Warm, cfg.Window, name)
	if err != nil {
		return nil, load, err
	}
	opts := budget.DefaultOptions
	opts.FixPotential = false
	opts.Predictions = whatif.Predictions(specs)
	opts.Rules.App = []string{"github.com/latscope/latscope/lab/queues"}
	res, err := analysis.Reader(ctx, name, bytes.NewReader(tr), opts, false)
	if err != nil {
		return nil, load, fmt.Errorf("%s: analyse: %w", name, err)
	}
	return res, load, nil
}

func errPct(pred, meas float64) float64 {
	if meas == 0 {
		return math.Inf(1)
	}
	return math.Round(1000*100*(pred-meas)/meas) / 1000
}

// cause explains a miss by the demand that changed between the model's
// "after" and the one measured after the fix, or by the queueing the model
// got wrong.
func cause(r *Run) string {
	var out string
	if v := r.Validation.MeanResidual; math.Abs(v) > Goal {
		out = fmt.Sprintf("the model of the trace as recorded is already %+.1f %% off (mean); ", v)
	}
	if d := r.After.GapMs - r.Before.GapMs; math.Abs(d) > 0.01*r.After.MeanMs {
		out += fmt.Sprintf("the clients spent %.3g ms between an answer and their next request after the fix, %.3g ms before (the host's other load delays them; the model keeps the time outside the request as it was); ", r.After.GapMs, r.Before.GapMs)
	}
	if r.AfterModel == nil {
		return out + "the after trace could not be modelled"
	}
	// The model's residence at each resource against the measured one
	// after the fix: the largest gap is the cause.
	measured := map[string]float64{}
	for _, a := range r.AfterModel.Resources {
		res := a.DemandMs + a.WaitMs
		if a.Kind == queueing.Delays {
			res += r.AfterModel.WakeupMs // the after model's delays exclude it
		}
		measured[a.Name] = res
	}
	worst, gap := "", 0.0
	for _, u := range r.Predicted.Resources {
		if m, ok := measured[u.Name]; ok && math.Abs(m-u.ResidenceMs) > math.Abs(gap) {
			gap = m - u.ResidenceMs
			worst = fmt.Sprintf("%s: %.3g ms per request predicted (demand %.3g + queue %.3g), %.3g ms measured after the fix", u.Name, u.ResidenceMs, u.DemandMs, u.WaitMs, m)
		}
	}
	if worst == "" {
		return out + "no resource of the model explains it"
	}
	// A demand that changed by itself (the fix does not touch it) is a
	// measurement cause, not a queueing one.
	for _, u := range r.Predicted.Resources {
		for _, a := range r.AfterModel.Resources {
			if a.Name == u.Name && a.Kind != queueing.Delays && u.DemandMs > 0 && math.Abs(a.DemandMs-u.DemandMs) > 0.03*u.DemandMs {
				out += fmt.Sprintf("%s demand %.3g ms in the before trace, %.3g ms after the fix (running and held time include time the OS gave the thread to other processes, and the hand-off of a freed connection); ", u.Name, u.DemandMs, a.DemandMs)
			}
		}
	}
	return out + worst + "; Go's scheduler runs a goroutine until it blocks (not processor sharing), so wake-ups wait behind CPU bursts and a freed connection's next holder waits to run while holding it"
}

func (r *Run) line() string {
	status := "ok"
	if !r.Pass {
		status = "MISS"
	}
	s := fmt.Sprintf("%-4s N=%-3d before %.2f ms %.1f rps (model %+.1f%%/%+.1f%%) | %s: predicted %.2f ms %.1f rps, measured %.2f ms %.1f rps: %+.1f%% / %+.1f%% %s (client gap %.2f/%.2f ms)",
		r.Case, r.Clients, r.Before.MeanMs, r.Before.RPS, r.Validation.MeanResidual, r.Validation.RPSResidual,
		"fix", r.PredictedClientMs, r.PredictedRPS, r.After.MeanMs, r.After.RPS, r.MeanErr, r.RPSErr, status, r.Before.GapMs, r.After.GapMs)
	if r.Predicted.RPS > 0 && r.Method == whatif.Queueing {
		s += fmt.Sprintf("; the model alone %.1f rps (%+.1f%%)", r.Predicted.RPS, errPct(r.Predicted.RPS, r.After.RPS))
	} else if r.Method != whatif.Queueing {
		s += fmt.Sprintf("; by the %s: %s", r.Method, r.Why)
	}
	if r.Moves != "" {
		s += "; " + r.Moves
	}
	if r.Cause != "" {
		s += "\n     cause: " + r.Cause
	}
	return s
}
