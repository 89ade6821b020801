package queueing

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/internal/budget"
)

// Usage is one resource's state in a solved model.
type Usage struct {
	Name        string       `json:"name"`
	Kind        ResourceKind `json:"kind"`
	Servers     int          `json:"servers,omitempty"`
	DemandMs    float64      `json:"demand_ms"`
	Util        float64      `json:"utilisation"`  // per server, 0..1; 0 for delays
	WaitMs      float64      `json:"wait_ms"`      // queueing per request (residence − demand)
	ResidenceMs float64      `json:"residence_ms"` // wait + demand
}

// State is a solved model: means over requests.
type State struct {
	MeanMs     float64 `json:"mean_ms"`
	RPS        float64 `json:"rps"`
	Clients    int     `json:"clients"`
	Bottleneck string  `json:"bottleneck"` // the most utilised queueing resource
	Resources  []Usage `json:"resources"`
	// Workers is the server's worker threads, ServerQueueMs the mean time
	// a request waits for one, outside MeanMs, and WorkersBusy the mean
	// share of them busy (0..1); all absent when no workers are modelled.
	Workers       int     `json:"workers,omitempty"`
	ServerQueueMs float64 `json:"server_queue_ms,omitempty"`
	WorkersBusy   float64 `json:"workers_busy,omitempty"`
	// BeforeMs is the mean time per request spent waiting for a CPU
	// outside it, before it began and between the requests, outside MeanMs
	// and inside the clients' cycle (Model.BeforeMs and ThinkQueueMs);
	// absent when none was measured.
	BeforeMs float64 `json:"runnable_before_ms,omitempty"`
	// Unstable, in an open model, says which resource cannot keep up with
	// the arrivals; the state then has no means.
	Unstable string `json:"unstable,omitempty"`
}

// Validation compares the model of the trace as recorded with the trace.
type Validation struct {
	ModelMeanMs    float64 `json:"model_mean_ms"`
	MeasuredMeanMs float64 `json:"measured_mean_ms"`
	MeanResidual   float64 `json:"mean_residual_pct"` // 100·(model − measured)/measured
	ModelRPS       float64 `json:"model_rps"`
	MeasuredRPS    float64 `json:"measured_rps"`
	RPSResidual    float64 `json:"rps_residual_pct"`
	// The server's queue before the request, modelled and measured, where
	// the server's workers are modelled.
	ModelServerQueueMs    float64 `json:"model_server_queue_ms,omitempty"`
	MeasuredServerQueueMs float64 `json:"measured_server_queue_ms,omitempty"`
}

// Outcome is one what-if solved before and after.
type Outcome struct {
	Spec   string `json:"spec"`
	Change string `json:"change"` // what the spec did to the demands
	Before State  `json:"before"`
	After  State  `json:"after"`
	// Moves names the new bottleneck when the change moves it: "the
	// bottleneck moves to pool withConn (97 % busy)".
	Moves string `json:"moves,omitempty"`
	// P99 is always absent: Mean Value Analysis gives means only, and an
	// open network's response time is a sum of queues whose distribution
	// the M/M/c formulas do not give; P99Note says so.
	P99Note string `json:"p99_note"`
	// AtRisk, when set, says that the throughput after rests on a hold
	// whose holder waited for a core, which the model keeps as recorded
	// (holdRisk).
	AtRisk *HoldRisk `json:"at_risk,omitempty"`
}

// Prediction is the queueing model's answer for one trace.
type Prediction struct {
	Model      *Model     `json:"model"`
	Method     string     `json:"method"`
	Validation Validation `json:"validation"`
	Outcomes   []Outcome  `json:"outcomes"`
}

// p99Note says why no p99 is given.
const p99Note = "not predicted: Mean Value Analysis gives means only"

// openP99Note says why no p99 is given for an open workload.
const openP99Note = "not predicted: the M/M/c formulas give each queue's mean, not the distribution of their sum"

// Predict builds the model of res (Build) and solves each what-if: the
// specs of budget.ParsePrediction (remove, scale, overlap) and pool=NAME:SIZE
// (or pool=SIZE), cores=N and clients=N. An overlap takes its saving from
// the timeline simulation, so res must have been analysed with the same
// spec among budget.Options.Predictions.
func Predict(res *budget.Result, in Inputs, specs []string) (*Prediction, error) {
	m, err := Build(res, in)
	if err != nil {
		return nil, err
	}
	p := &Prediction{Model: m, Method: "exact MVA"}
	note := p99Note
	if m.Rate > 0 {
		p.Method, note = "open network, M/M/c per station", openP99Note
	}
	if m.Workers > 0 {
		p.Method += "; the server's workers as a flow-equivalent server"
	}
	before, err := m.solve()
	if err != nil {
		return nil, err
	}
	p.Validation = Validation{ModelMeanMs: before.MeanMs, MeasuredMeanMs: round3(m.MeasuredMeanMs),
		ModelRPS: before.RPS, MeasuredRPS: round3(m.MeasuredRPS),
		MeanResidual: pct(before.MeanMs, m.MeasuredMeanMs), RPSResidual: pct(before.RPS, m.MeasuredRPS)}
	if m.Workers > 0 {
		p.Validation.ModelServerQueueMs, p.Validation.MeasuredServerQueueMs = before.ServerQueueMs, round3(m.ServerQueueMs)
	}
	g, _ := pickGroup(res, in.Task)
	for _, spec := range specs {
		after, change, err := m.apply(res, g, spec)
		if err != nil {
			return nil, err
		}
		st, err := after.solve()
		var unstable *UnstableError
		switch {
		case errors.As(err, &unstable):
			st = State{RPS: after.Rate, Unstable: unstable.Error()}
		case err != nil:
			return nil, fmt.Errorf("what-if %q: %w", spec, err)
		}
		o := Outcome{Spec: spec, Change: change, Before: before, After: st, P99Note: note, AtRisk: holdRisk(m, after, st)}
		if st.Bottleneck != before.Bottleneck && st.Bottleneck != "" {
			for _, u := range st.Resources {
				if u.Name == st.Bottleneck {
					o.Moves = fmt.Sprintf("the bottleneck moves to %s (%.0f %% busy)", u.Name, 100*u.Util)
				}
			}
		}
		p.Outcomes = append(p.Outcomes, o)
	}
	return p, nil
}

func pct(model, measured float64) float64 {
	if measured == 0 {
		return 0
	}
	return round3(100 * (model - measured) / measured)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// solve solves m at its client count.
func (m *Model) solve() (State, error) {
	net := m.network()
	var sol Solution
	var ws WorkersSolution
	var err error
	switch {
	case m.Workers > 0 && m.Rate > 0:
		ws, err = SolveOpenWorkers(net, m.Rate, m.Workers)
		sol = ws.Solution
	case m.Workers > 0:
		ws, err = SolveWorkers(net, m.Clients, m.Workers)
		sol = ws.Solution
	case m.Rate > 0:
		sol, err = SolveOpen(net, m.Rate)
	default:
		sol, err = Solve(net, m.Clients)
	}
	if err != nil {
		return State{}, err
	}
	// The CPU station's demand includes the process's CPU outside any
	// request, and its queue the wait outside the request (before it
	// began, and between the requests); the request's own latency holds
	// neither.
	before := m.beforeShare * (1000*max(0, sol.Residence[0]-m.Resources[0].DemandMs/1000) + m.WakeupMs)
	st := State{MeanMs: round3(max(0, 1000*sol.Response-m.OutsideCPUMs-before)), RPS: round3(sol.Throughput), Clients: m.Clients}
	if m.outsideWait() > 0 {
		st.BeforeMs = round3(before)
	}
	if m.Workers > 0 {
		st.Workers, st.ServerQueueMs, st.WorkersBusy = m.Workers, round3(1000*ws.QueueWait), round3(ws.Busy)
	}
	if b := sol.Bottleneck(); b >= 0 {
		st.Bottleneck = net.Stations[b].Name
	}
	for k, r := range m.Resources {
		st.Resources = append(st.Resources, Usage{Name: r.Name, Kind: r.Kind, Servers: r.Servers, DemandMs: round3(r.DemandMs),
			Util: round3(sol.Util[k]), ResidenceMs: round3(1000 * sol.Residence[k]),
			WaitMs: round3(max(0, 1000*sol.Residence[k]-r.DemandMs))})
	}
	return st, nil
}

// apply returns a copy of m changed by spec and a sentence saying how.
func (m *Model) apply(res *budget.Result, g *budget.Group, spec string) (*Model, string, error) {
	op, arg, _ := strings.Cut(spec, "=")
	c := m.clone()
	switch op {
	case "cores":
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || v < 1 || v > 1e5 {
			return nil, "", fmt.Errorf("what-if %q: want cores=N with N from 1 to 100000", spec)
		}
		c.Resources[0].Servers = int(math.Round(v))
		return c, fmt.Sprintf("CPU: %d → %d cores", m.Resources[0].Servers, c.Resources[0].Servers), nil
	case "rate":
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(v > 0) || v > 1e7 {
			return nil, "", fmt.Errorf("what-if %q: want rate=R with R requests per second, above 0 and at most 1e7", spec)
		}
		if m.Rate == 0 {
			return nil, "", fmt.Errorf("what-if %q: the model is closed (clients and think time); model an open workload (--open or --rate) to change its rate", spec)
		}
		c.Rate = v
		return c, fmt.Sprintf("arrival rate: %.6g → %.6g per second", m.Rate, v), nil
	case "clients":
		if m.Rate > 0 {
			return nil, "", fmt.Errorf("what-if %q: the model is open (an arrival rate, no clients); use rate=R", spec)
		}
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 || v > MaxExactPopulation {
			return nil, "", fmt.Errorf("what-if %q: want clients=N with N from 1 to %d", spec, MaxExactPopulation)
		}
		c.Clients = v
		return c, fmt.Sprintf("clients: %d → %d (think time %.3g ms kept)", m.Clients, v, m.ThinkMs), nil
	case "workers":
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 || v > MaxExactPopulation {
			return nil, "", fmt.Errorf("what-if %q: want workers=N with N from 1 to %d", spec, MaxExactPopulation)
		}
		c.Workers = v
		if m.Workers == 0 {
			return c, fmt.Sprintf("the server's workers: not modelled → %d", v), nil
		}
		return c, fmt.Sprintf("the server's workers: %d → %d", m.Workers, v), nil
	case "pool":
		ps, err := ParsePool(arg)
		if err != nil {
			return nil, "", fmt.Errorf("what-if %q: %w", spec, err)
		}
		for i := range c.Resources {
			r := &c.Resources[i]
			if r.Kind == Pool && (ps.Name == "" || r.Name == ps.Name) {
				old := r.Servers
				r.Servers = ps.Size
				return c, fmt.Sprintf("pool %s: %d → %d", r.Name, old, ps.Size), nil
			}
		}
		return nil, "", fmt.Errorf("what-if %q: no modelled pool %q (name it among the pools)", spec, ps.Name)
	}
	pr, err := budget.ParsePrediction(spec)
	if err != nil {
		return nil, "", fmt.Errorf("what-if: %w", err)
	}
	n := float64(g.Count)
	delay := &c.Resources[len(c.Resources)-1]
	if pr.Op == budget.OpOverlap {
		for _, r := range g.Predictions {
			if r.Spec == spec {
				saved := max(0, m.MeasuredMeanMs-r.Mean/1e6)
				take := min(saved, delay.DemandMs)
				delay.DemandMs -= take
				return c, fmt.Sprintf("overlap saves %.3g ms on the timeline simulation (queue waits as recorded), taken from the delays", saved), nil
			}
		}
		return nil, "", fmt.Errorf("what-if %q: the analysis did not simulate it", spec)
	}
	f := pr.Factor
	if pr.Op == budget.OpRemove {
		f = 0
	}
	var parts []string
	cut := map[string]float64{}
	var order []string
	var matched bool
	for _, ts := range g.Terms {
		t := res.Terms[ts.Term]
		if !t.Matches(pr.A) {
			continue
		}
		matched = true
		d := float64(ts.Critical) / n / 1e6 * (1 - f)
		target := delay
		for i := range c.Resources {
			r := &c.Resources[i]
			if r.Kind != Pool {
				continue
			}
			if r.acquire(t) {
				target = nil
				if f == 0 && r.Servers > 0 {
					r.Servers = 0 // the pool is gone: its hold becomes a pure delay
					parts = append(parts, fmt.Sprintf("pool %s removed", r.Name))
				}
				break
			}
			if r.hold(t) {
				target = r
				break
			}
		}
		if target != nil && d != 0 {
			target.DemandMs = max(0, target.DemandMs-d)
			if _, ok := cut[target.Name]; !ok {
				order = append(order, target.Name)
			}
			cut[target.Name] += d
		}
	}
	// A frame's CPU (a CPU term, docs/method.md §3 "CPU by frame") is
	// demand at the CPU station: all of it, on the critical path and off
	// it, and the running time that goes along with it (CPUDemand).
	for _, ts := range g.CPUTerms {
		t := res.Terms[ts.Term]
		if !t.Matches(pr.A) {
			continue
		}
		matched = true
		d := CPUDemand(ts) / n / 1e6 * (1 - f)
		if cpu := &c.Resources[0]; cpu.Kind == CPU && d != 0 {
			cpu.DemandMs = max(0, cpu.DemandMs-d)
			if _, ok := cut[cpu.Name]; !ok {
				order = append(order, cpu.Name)
			}
			cut[cpu.Name] += d
		}
	}
	for _, name := range order {
		parts = append(parts, fmt.Sprintf("%s −%.3g ms", name, cut[name]))
	}
	if !matched {
		return nil, "", fmt.Errorf("what-if %q: no wait of request type %q matches %q", spec, g.Name, pr.A)
	}
	return c, strings.Join(parts, ", "), nil
}

// CPUDemand is the CPU station's demand a CPU term ts stands for, in ns
// summed over the group's requests: its CPU on and off the critical path
// (TermStat.Wait) and the running time that went along with it
// (AlongRunning).
func CPUDemand(ts budget.TermStat) float64 {
	return float64(ts.Wait) + AlongRunning(ts)
}

// AlongRunning is the part of ts's Along that is running time (Go counting
// the goroutine running while no sample saw it): the rest, AlongRunnable,
// is the runnable time of the frame's preemptions, which is queueing, not
// demand.
func AlongRunning(ts budget.TermStat) float64 {
	return float64(max(0, ts.Along-ts.AlongRunnable))
}
