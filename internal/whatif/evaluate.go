package whatif

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/stats"
)

// Method is how a prediction was made.
type Method string

// Methods.
const (
	// Timeline re-simulates each request's critical path with the change
	// (docs/method.md §5), keeping every recorded queue wait as recorded,
	// with the closed model's caps (budget.Group.Cap).
	Timeline Method = "timeline simulation"
	// Queueing solves the request type's queueing network before and after
	// the change (package queueing) and adds the change in its queueing to
	// the timeline's mean.
	Queueing Method = "queueing model"
)

// QueueShare is the share of the base mean from which a queue counts as in
// play: a modelled queue (CPU or pool) before or after the change, or a
// pool's measured acquire wait, at least this large chooses the queueing
// model. Below it the queueing cannot move a verdict at compare's 5 % bar.
const QueueShare = 0.01

// Inputs are what the trace does not say: the capacity the queueing model
// and the closed model's caps use. Zero values take the trace's own.
type Inputs struct {
	Clients float64             // closed-model clients; 0 estimates them (Little's law)
	Cores   float64             // 0: GOMAXPROCS from the trace
	Pools   []queueing.PoolSpec // pools (and locks, as NAME:1) to model
	Workers int                 // the server's worker threads; 0 takes them from the input where it has them
	Open    bool                // an open workload at the trace's rate
	Rate    float64             // an open workload at this rate (per second)
	CPU     time.Duration       // CPU per request from an independent counter (analyze --cpu-seconds); closed model's cap only
	// ClientsInProcess says the clients run in the service's process
	// (queueing.Inputs.ClientsInProcess): their think time is the CPU's
	// queue outside the request.
	ClientsInProcess bool
}

// Outcome is one spec's prediction.
type Outcome struct {
	Spec   string
	Method Method
	// Why says why Method was chosen: the queue in play, or that none is
	// (and what would model one that is not sized).
	Why string
	// Mean is the predicted mean latency; Low and High its 95 % interval
	// when Interval is set (see Evaluate for how it is derived), with SE
	// its standard error in nanoseconds and DF its degrees of freedom.
	Mean, Low, High time.Duration
	Interval        bool
	SE, DF          float64
	// P99 is the simulated p99; 0 when not predicted (the queueing model
	// gives means only; a timeline prediction queueing at a cap).
	P99 time.Duration
	// RPS is the predicted throughput, Limit what limits it (timeline).
	RPS   float64
	Limit string
	// Simulated is the timeline simulation's own mean (0 for a model spec);
	// Queue is what Mean adds to its base: the queue at the closed model's
	// cap (timeline), or the queueing model's change in queueing (queueing;
	// negative when the change shortens the queues).
	Simulated, Queue time.Duration
	// Change says what the spec did to the model's demands, Moves where the
	// bottleneck goes; Before and After are the model's states (queueing
	// only). Unstable, for an open model, says which station cannot keep up
	// (then Mean is 0).
	Change, Moves, Unstable string
	Before, After           *queueing.State
}

// Evaluation is every spec's outcome for one request type.
type Evaluation struct {
	Group string
	// Model is the request type's queueing network as measured, and
	// Validation how it compares with the trace; nil when it could not be
	// built, Unbuilt then says why.
	Model      *queueing.Model
	Validation *queueing.Validation
	Unbuilt    string
	Outcomes   []Outcome // one per spec, in order
}

// Evaluate predicts each spec for the request type group of res ("" for
// the first with requests, as queueing.Build picks it): by the queueing model where a queue is in play or the spec is
// a model spec (pool=, cores=, clients=, rate=), by the timeline simulation
// where none is. Timeline specs must have been simulated: res analysed with
// Predictions(specs) among budget.Options.Predictions.
//
// The mean: a timeline outcome's is the simulated mean, raised to clients /
// throughput when a closed-model cap holds the throughput below what the
// clients ask (budget.Group.Cap). A queueing outcome's is anchored on the
// trace: the base (the simulated mean for a timeline spec, the measured mean
// for a model spec) plus the model's change in queueing, Σ over the CPU and
// pool stations of (queue after − queue before). The timeline keeps the
// request's fork/join structure and its recorded waits; the model adds only
// what the change does to the queues, so its error in the level of the
// queues cancels.
//
// The 95 % interval: batch means (stats.BatchMeans) over the per-request
// series — each request's simulated latency for a timeline spec
// (budget.PredictionResult.Latencies), its measured latency for a model
// spec — in the order the requests ended, so that autocorrelation between
// neighbouring requests widens it; Student's t on the batches' degrees of
// freedom. A mean that the cap or the queueing model moves off the series'
// mean keeps the series' relative standard error r = SE / base (SE = r ×
// Mean). A queueing outcome adds the error its measured demands carry into
// the queues: r × |g|, g the derivative of the change in queueing with
// respect to a relative error common to every demand (central differences
// at ±Epsilon), taking the demands to be as uncertain as the base mean and
// adding the two terms (the same requests measure both). So the interval
// widens near saturation, where a small error in the demands moves the
// queues most, and is the series' own where no queue is. It is the
// sampling error of the requests the trace holds; the model's structural
// error is not in it (queueing.Validation reports the model against the
// trace, and Why says so where the model misses the trace's own mean by
// more than ModelFit per cent). No interval (Interval false) with fewer than
// stats.MinSeries requests or without a series (a reader that keeps none).
func Evaluate(res *budget.Result, group string, in Inputs, specs []Spec) (*Evaluation, error) {
	g, err := pickGroup(res, group)
	if err != nil {
		return nil, err
	}
	ev := &Evaluation{Group: g.Name}
	qin := queueing.Inputs{Task: g.Name, Clients: in.Clients, Cores: in.Cores, Pools: in.Pools, Open: in.Open, Rate: in.Rate, Workers: in.Workers,
		ClientsInProcess: in.ClientsInProcess}
	if p, err := queueing.Predict(res, qin, nil); err != nil {
		ev.Unbuilt = err.Error()
	} else {
		ev.Model, ev.Validation = p.Model, &p.Validation
	}
	tp := g.Closed(res, budget.Capacity{Clients: in.Clients, Cores: in.Cores, Pool: unnamedPool(in.Pools), CPUPerRequest: in.CPU})
	for _, s := range specs {
		o, err := ev.evaluate(res, g, qin, tp, s)
		if err != nil {
			return nil, err
		}
		ev.Outcomes = append(ev.Outcomes, o)
	}
	return ev, nil
}

// evaluate predicts one spec.
func (ev *Evaluation) evaluate(res *budget.Result, g *budget.Group, qin queueing.Inputs, tp budget.Throughput, s Spec) (Outcome, error) {
	if s.Model() {
		if ev.Model == nil {
			return Outcome{}, fmt.Errorf("what-if %q: %s= changes the queueing model's inputs, and no model could be built: %s", s.Text, s.Op(), ev.Unbuilt)
		}
		series := toFloat(g.Latencies)
		q, err := ev.queued(res, qin, s, g.Latency.Mean, series)
		if err != nil {
			return Outcome{}, err
		}
		q.Why = "changes the queueing model's inputs; " + q.Why
		return q, nil
	}
	pr, ok := simulated(g, s)
	if !ok {
		return Outcome{}, fmt.Errorf("what-if %q: the analysis did not simulate it (budget.Options.Predictions)", s.Text)
	}
	for _, name := range []string{pr.A, pr.B} {
		if name == "" {
			continue
		}
		if err := budget.CheckName(res.Terms, name); err != nil {
			return Outcome{}, fmt.Errorf("what-if %q: %w", s.Text, err)
		}
	}
	t := timeline(res, g, tp, pr)
	if ev.Model == nil {
		t.Why = "no queue modelled: " + ev.Unbuilt
		return t, nil
	}
	q, err := ev.queued(res, qin, s, pr.Mean, toFloat(pr.Latencies))
	if err != nil {
		// The model cannot take the change (a CPU frame's term, say): the
		// timeline's answer stands, and says so.
		t.Why = "the queueing model cannot apply it (" + err.Error() + "); no queue counted"
		return t, nil
	}
	if q.Method == Queueing {
		return q, nil
	}
	t.Why = q.Why
	return t, nil
}

// timeline is the timeline simulation's outcome, with the closed model's
// caps.
func timeline(res *budget.Result, g *budget.Group, tp budget.Throughput, pr budget.PredictionResult) Outcome {
	c := g.Cap(res, tp, pr)
	o := Outcome{Spec: pr.Spec, Method: Timeline, Mean: c.Mean, P99: c.P99, RPS: c.RPS, Limit: c.Limit, Simulated: c.Simulated, Queue: c.Queue}
	o.interval(toFloat(pr.Latencies), float64(c.Simulated), 0)
	return o
}

// queued solves s on the queueing model and returns its outcome, with
// Method Queueing when a queue is in play (else Timeline, with Why saying
// that none is). base is the mean the change in queueing is added to and
// series the per-request series it is the mean of.
func (ev *Evaluation) queued(res *budget.Result, qin queueing.Inputs, s Spec, base float64, series []float64) (o Outcome, err error) {
	p, err := queueing.Predict(res, qin, []string{s.Text})
	if err != nil {
		if !strings.Contains(err.Error(), s.Text) {
			err = fmt.Errorf("what-if %q: %w", s.Text, err)
		}
		return Outcome{}, err
	}
	po := p.Outcomes[0]
	o = Outcome{Spec: s.Text, Method: Queueing, Change: po.Change, Moves: po.Moves, Before: &po.Before, After: &po.After,
		RPS: po.After.RPS, Unstable: po.After.Unstable}
	if !s.Model() {
		o.Simulated = time.Duration(base)
	}
	name, largest, dq := queues(p.Model, po)
	// The part of the CPU's queue before the request began is outside its
	// latency (queueing.Model.BeforeMs); it stays in the clients' cycle.
	dq -= po.After.BeforeMs - po.Before.BeforeMs
	if o.Unstable != "" {
		o.Why = o.Unstable
		return o, nil
	}
	if r, note := unseen(p.Model, base); note != "" {
		switch {
		case !s.Model():
			return Outcome{Method: Timeline, Why: note + "; the timeline keeps its recorded waits"}, nil
		case s.Op() == "pool" && targets(s, r):
			return Outcome{}, fmt.Errorf("what-if %q: %s, so its size changes nothing the model can predict", s.Text, note)
		}
		defer func() { o.Why += "; " + note }()
	}
	if largest < QueueShare*base/1e6 && !s.Model() {
		why := fmt.Sprintf("no queue in play: the largest modelled queue, %s, is %.3g ms per request (under %.0f %% of the mean)", name, largest, 100*QueueShare)
		if unsized := notSized(res, ev, base); unsized != "" {
			why += "; " + unsized
		}
		return Outcome{Method: Timeline, Why: why}, nil
	}
	anchor := base
	if !s.Model() {
		// Like with like: the demand each side takes off. The timeline's
		// saving less what it took off the model's queues as recorded, the
		// model's demand saving less what the timeline cannot re-simulate.
		queue, unplaced, offpath := recorded(res, p.Model, *s.Timeline)
		qs, ts := saving(po)-unplaced-offpath, p.Model.MeasuredMeanMs-base/1e6-queue
		if math.Abs(qs-ts) > QueueShare*p.Model.MeasuredMeanMs {
			besides := ""
			if queue > 0 {
				besides = fmt.Sprintf(" besides the %.3g ms it takes off the recorded queues", queue)
			}
			return Outcome{Method: Timeline, Why: fmt.Sprintf("the queueing model's change saves %.3g ms per request of demand where the timeline saves %.3g ms%s (the request's fork/join structure, which the model does not have); its queues (%s: %.3g ms) would be off", qs, ts, besides, name, largest)}, nil
		}
		// The model recomputes the queues the timeline scaled as recorded,
		// and takes off the demand the timeline could not place.
		anchor += (queue - unplaced) * 1e6
	}
	o.Queue = time.Duration(dq * 1e6)
	o.Mean = time.Duration(max(0, anchor+dq*1e6))
	if p.Model.Rate == 0 {
		// The closed model's throughput at the anchored mean: N / (R + Z),
		// Z the think time and the CPU outside requests (queueing.Build),
		// the wait for a CPU before the request, and the wait for the
		// server's workers, where they are modelled.
		if cycle := o.Mean.Seconds() + (p.Model.ThinkMs+p.Model.OutsideCPUMs+po.After.ServerQueueMs+po.After.BeforeMs)/1000; cycle > 0 {
			o.RPS = float64(po.After.Clients) / cycle
		}
	}
	o.Why = fmt.Sprintf("queue at %s: %.3g ms per request before, %.3g ms after", name, stationWait(po.Before, name), stationWait(po.After, name))
	if r := resource(p.Model, name); r.Kind == queueing.Pool {
		o.Why += fmt.Sprintf(" (%.3g ms measured)", r.WaitMs)
	}
	if m := p.Model; po.After.Workers > 0 && po.Before.ServerQueueMs+po.After.ServerQueueMs > 0 {
		o.Why += fmt.Sprintf("; the server's %d workers (%s): %.3g → %.3g ms per request waiting for one, outside the request", po.After.Workers, m.WorkersFrom, po.Before.ServerQueueMs, po.After.ServerQueueMs)
	}
	if b, a := cpuDemand(po.Before), cpuDemand(po.After); !s.Model() && b != a {
		// A frame's CPU named by the spec (queueing.CPUDemand).
		o.Why += fmt.Sprintf("; the CPU's demand %.3g → %.3g ms per request", b, a)
	}
	if note := thinkNote(p.Model, po, base); note != "" {
		o.Why += "; " + note
	}
	if m := p.Model; m.OthersShare > 0 {
		o.Why += fmt.Sprintf("; the CPU's demand charged by 1 / (1 − %.2f): the machine's other processes used %.0f %% of its cores while recording, and are taken to go on so", m.OthersShare, 100*m.OthersGiven)
	}
	if v := p.Validation; math.Abs(v.MeanResidual) > ModelFit {
		// the interval is the requests' sampling error only: say when the
		// model does not reproduce the trace it was built from
		o.Why += fmt.Sprintf("; the model of the trace as recorded is off by %+.1f %% (%.3g ms against %.3g measured): the queues it changes may be off by as much", v.MeanResidual, v.ModelMeanMs, v.MeasuredMeanMs)
	}
	if sens, ok := sensitivity(res, p.Model, s.Text); ok {
		o.interval(series, base, sens)
	} else {
		o.Why += fmt.Sprintf("; no interval: the model saturates if its demands are off by %.0f %%", 100*Epsilon)
	}
	return o, nil
}

// thinkNote says what the model did with the clients' think time where
// the change moves the CPU's queue: with the clients in the process
// (queueing.Model.ThinkQueueMs), that it took the think time as the CPU's
// queue outside the request and recomputed it; else, where the process's
// goroutines outside the requests waited for a CPU as long as compare's
// bar (ModelFit % of the mean), that the model keeps that wait in the
// think time, so that clients in the process (a benchmark's load, an
// httptest server), whose cycle shortens or lengthens with the CPU's
// queue, put the whole change inside the request.
func thinkNote(m *queueing.Model, po queueing.Outcome, base float64) string {
	b, a := stationWait(po.Before, "CPU"), stationWait(po.After, "CPU")
	if math.Abs(a-b) < QueueShare*base/1e6 {
		return ""
	}
	switch {
	case m.ThinkQueueMs > 0:
		return fmt.Sprintf("the clients run in the process: their %.3g ms think time (%.3g ms of it runnable) is the CPU's queue outside the request, which the model recomputes with the wait before the request (%.3g → %.3g ms)", m.ThinkQueueMs, m.ThinkRunnableMs, po.Before.BeforeMs, po.After.BeforeMs)
	case m.ThinkRunnableMs <= 0 || m.ThinkRunnableMs < ModelFit/100.0*max(base/1e6, m.MeasuredMeanMs):
		return ""
	case m.ClientsInProcess:
		return fmt.Sprintf("%.3g ms of the clients' %.3g ms think time is the process's goroutines outside the requests waiting for a CPU, but the model's own queue does not explain the wait for a CPU: the model keeps the think time, and the mean may be off by up to as much", m.ThinkRunnableMs, m.ThinkMs)
	}
	return fmt.Sprintf("%.3g ms of the clients' %.3g ms think time is the process's goroutines outside the requests waiting for a CPU (the server's between requests, or clients in this process): the model keeps the think time, so the CPU's queue there does not change with it, and the mean may be off by up to as much (with the clients in the process, --clients-in-process takes it as the CPU's queue)", m.ThinkRunnableMs, m.ThinkMs)
}

// cpuDemand is the CPU station's demand in st, ms per request.
func cpuDemand(st queueing.State) float64 {
	for _, u := range st.Resources {
		if u.Kind == queueing.CPU {
			return u.DemandMs
		}
	}
	return 0
}

// saving is the demand per request, in ms, that the change took off the
// model's stations (negative when it added some).
func saving(po queueing.Outcome) float64 {
	var d float64
	for k, u := range po.Before.Resources {
		d += u.DemandMs
		if k < len(po.After.Resources) {
			d -= po.After.Resources[k].DemandMs
		}
	}
	return d
}

// recorded splits what a request would save under the timeline spec pr
// were its matched terms on one serial path (each term's critical time ×
// (1 − factor), ms per request) by what the queueing model does with it:
// queue is the part on a modelled pool's acquire wait — a queue the
// timeline scales as recorded and the model recomputes from the demands,
// so neither a demand saving nor part of the anchor; unplaced the part on
// terms the timeline does not re-simulate (a JVM recording's CPU terms,
// the Java library's thread CPU placed after the walk), which the model
// takes off as demand. An overlap is 0, 0: the model takes the timeline's
// own saving (queueing.Model.Apply).
//
// A frame's CPU (a CPU term) is demand at the CPU station, which the
// model takes off whole (queueing.CPUDemand): offpath is the part of it
// off the critical path, which the timeline's mean does not hold, and
// queue holds the runnable time of the frame's preemptions, which the
// timeline scales with the frame (docs/method.md §3) and the model
// recomputes as the CPU's queue.
func recorded(res *budget.Result, m *queueing.Model, pr budget.Prediction) (queue, unplaced, offpath float64) {
	g, err := pickGroup(res, m.Group)
	if err != nil || g.Count == 0 || pr.Op == budget.OpOverlap {
		return 0, 0, 0
	}
	f := pr.Factor
	if pr.Op == budget.OpRemove {
		f = 0
	}
	for _, ts := range g.Terms {
		t := res.Terms[ts.Term]
		if !t.Matches(pr.A) {
			continue
		}
		d := float64(ts.Critical) / float64(g.Count) / 1e6 * (1 - f)
		switch {
		case m.Queued(t):
			queue += d
		case res.Info.JVM && t.Kind == frame.Running:
			unplaced += d
		}
	}
	per := (1 - f) / float64(g.Count) / 1e6 // ns summed over requests → ms per request, scaled
	for _, ts := range g.CPUTerms {
		if !res.Terms[ts.Term].Matches(pr.A) {
			continue
		}
		run := queueing.AlongRunning(ts)
		queue += max(0, float64(ts.Along)-run) * per
		offpath += max(0, float64(ts.Wait-ts.Critical)) * per
	}
	return queue, unplaced, offpath
}

// queues returns the station with the largest queue (modelled before or
// after, or a pool's measured acquire wait), that queue in ms per request,
// and the change in modelled queueing over the CPU and pool stations, in
// ms per request.
func queues(m *queueing.Model, po queueing.Outcome) (name string, largest, dq float64) {
	for k, r := range m.Resources {
		if r.Kind == queueing.Delays {
			continue
		}
		b, a := wait(po.Before, k), wait(po.After, k)
		dq += a - b
		q := max(a, b)
		if r.Kind == queueing.Pool {
			q = max(q, r.WaitMs)
		}
		if name == "" || q > largest {
			name, largest = label(r), q
		}
	}
	return name, largest, dq
}

func wait(st queueing.State, k int) float64 {
	if k < len(st.Resources) {
		return st.Resources[k].WaitMs
	}
	return 0
}

// label names a station as a sentence does: "CPU", "pool main.pooled".
func label(r queueing.Resource) string {
	if r.Kind == queueing.Pool {
		return "pool " + r.Name
	}
	return r.Name
}

// unseen returns a pool of m whose measured acquire wait (QueueShare of
// base or more) the model cannot produce, with a sentence saying so: in a
// closed network of N clients a pool held H per request queues each
// request at most about N·H, so a wait above it means the time the pool is
// held is not beneath its acquiring frame (a pool acquired in a helper, a
// lock around CPU rather than waits).
func unseen(m *queueing.Model, base float64) (queueing.Resource, string) {
	for _, r := range m.Resources {
		hold := max(0, r.DemandMs-r.WakeMs)
		if r.Kind == queueing.Pool && r.WaitMs >= QueueShare*base/1e6 && hold*float64(max(m.Clients, 1)) < r.WaitMs {
			return r, fmt.Sprintf("pool %s's acquire wait, %.3g ms per request, is not in the queueing model: it finds %.3g ms held beneath the acquiring frame (a pool acquired in a helper, or a lock around CPU)",
				r.Name, r.WaitMs, hold)
		}
	}
	return queueing.Resource{}, ""
}

// targets reports whether the pool= spec s resizes r.
func targets(s Spec, r queueing.Resource) bool {
	_, arg, _ := strings.Cut(s.Text, "=")
	ps, err := queueing.ParsePool(arg)
	return err == nil && (ps.Name == "" || ps.Name == r.Name)
}

// resource is the station of m labelled name.
func resource(m *queueing.Model, name string) queueing.Resource {
	for _, r := range m.Resources {
		if label(r) == name {
			return r
		}
	}
	return queueing.Resource{}
}

// stationWait is the modelled queue of the station labelled name in st.
func stationWait(st queueing.State, name string) float64 {
	for _, u := range st.Resources {
		if label(queueing.Resource{Name: u.Name, Kind: u.Kind}) == name {
			return u.WaitMs
		}
	}
	return 0
}

// notSized names the largest wait that another request ended (a lock or a
// pool held elsewhere, by budget's Contention) at QueueShare of base or
// more and that no pool of the model covers: a queue the model does not
// see until it is sized. "" when there is none.
func notSized(res *budget.Result, ev *Evaluation, base float64) string {
	g, err := pickGroup(res, ev.Group)
	if err != nil || g.Count == 0 {
		return ""
	}
	var best budget.TermStat
	for _, ts := range g.Terms {
		t := res.Terms[ts.Term]
		if t.Frame == "" || !t.Kind.IsHandOff() || modelled(ev.Model, t) {
			continue
		}
		if ts.Contention > best.Contention {
			best = ts
		}
	}
	per := float64(best.Contention) / float64(g.Count)
	if per < QueueShare*base || per == 0 {
		return ""
	}
	t := res.Terms[best.Term]
	return fmt.Sprintf("the %s at %s (%.3g ms per request ended by other requests) is not modelled: --pool %s:SIZE models it as a pool (SIZE 1 for a lock)",
		t.Kind, t.Frame, per/1e6, shortName(t.Frame))
}

// modelled reports whether a pool of m covers the frame of t.
func modelled(m *queueing.Model, t budget.Term) bool {
	if m == nil {
		return false
	}
	for _, r := range m.Resources {
		if r.Kind == queueing.Pool && (r.Name == "connection pool" && budget.IsPoolWait(t) || t.Matches(r.Name)) {
			return true
		}
	}
	return false
}

// shortName is a frame's name without its package path: "main.pooled".
func shortName(fn string) string {
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// interval sets o's 95 % interval from series, whose mean is base: the
// series' relative standard error r = SE/base applied to o.Mean and, for a
// queueing outcome, to its sensitivity sens (ns of queueing per unit of
// relative demand error): SE = r·(Mean + |sens|).
func (o *Outcome) interval(series []float64, base, sens float64) {
	if len(series) < stats.MinSeries || base <= 0 {
		return
	}
	m := stats.BatchMeans(series)
	if !m.OK() {
		return
	}
	se := m.SE
	if v := float64(o.Mean) + math.Abs(sens); v != base {
		se = m.SE / base * v
	}
	o.SE, o.DF, o.Interval = se, m.DF(), true
	h := stats.TQuantile(0.975, o.DF) * se
	o.Low, o.High = time.Duration(math.Max(0, float64(o.Mean)-h)), time.Duration(float64(o.Mean)+h)
}

// ModelFit is the percentage by which the queueing model of the trace as
// recorded may miss the trace's mean (queueing.Validation) before a
// prediction by it says so: the bar of compare's verdicts.
const ModelFit = 5

// Epsilon is the relative error of every measured demand at which
// sensitivity differentiates the change in queueing.
const Epsilon = 0.01

// sensitivity is the derivative of the model's change in queueing (ns per
// request) with respect to a relative error common to every measured
// demand, by central differences at ±Epsilon: how much a prediction moves
// when the demands it was built from are off. ok is false when the model
// cannot be solved there (an open model that saturates).
func sensitivity(res *budget.Result, m *queueing.Model, spec string) (float64, bool) {
	dq := func(f float64) (float64, bool) {
		b := m.ScaleDemands(f)
		before, err := b.Solve()
		if err != nil {
			return 0, false
		}
		a, _, err := b.Apply(res, spec)
		if err != nil {
			return 0, false
		}
		after, err := a.Solve()
		if err != nil {
			return 0, false
		}
		_, _, d := queues(b, queueing.Outcome{Before: before, After: after})
		return d, true
	}
	hi, ok1 := dq(1 + Epsilon)
	lo, ok2 := dq(1 - Epsilon)
	return (hi - lo) / (2 * Epsilon) * 1e6, ok1 && ok2
}

func toFloat(ns []int64) []float64 {
	if ns == nil {
		return nil
	}
	xs := make([]float64, len(ns))
	for i, v := range ns {
		xs[i] = float64(v)
	}
	return xs
}

// simulated is the group's prediction for s.
func simulated(g *budget.Group, s Spec) (budget.PredictionResult, bool) {
	for _, p := range g.Predictions {
		if p.Spec == s.Text {
			return p, true
		}
	}
	return budget.PredictionResult{}, false
}

// unnamedPool is the size of the pool given without a name (the closed
// model's cap takes one such pool); 0 if none.
func unnamedPool(pools []queueing.PoolSpec) int {
	for _, p := range pools {
		if p.Name == "" {
			return p.Size
		}
	}
	return 0
}

// errNoRequests is returned for a trace without a finished request.
var errNoRequests = errors.New("no finished request in the trace")

// pickGroup is the request type named group, or the first with requests
// when group is "" (as queueing.Build picks it).
func pickGroup(res *budget.Result, group string) (*budget.Group, error) {
	for _, g := range res.Groups {
		if g.Count > 0 && (group == "" || g.Name == group) {
			return g, nil
		}
	}
	if group != "" {
		return nil, fmt.Errorf("no finished request of type %q", group)
	}
	return nil, errNoRequests
}
