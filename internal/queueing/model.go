package queueing

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
)

// ResourceKind is what a resource of a Model is.
type ResourceKind string

// Resource kinds.
const (
	CPU    ResourceKind = "cpu"   // the cores: a multi-server station
	Pool   ResourceKind = "pool"  // a connection pool, semaphore or lock: a multi-server station
	Delays ResourceKind = "delay" // everything without a queue of its own (upstream, sleeps, network, think)
)

// Resource is one station of the model with its measured demand.
type Resource struct {
	Name    string       `json:"name"`
	Kind    ResourceKind `json:"kind"`
	Servers int          `json:"servers,omitempty"` // cores or pool size; 0 for a delay
	// DemandMs is the service demand of one request: CPU time, the time a
	// connection is held, or the pure delay.
	DemandMs float64 `json:"demand_ms"`
	// WaitMs is the queueing measured in the trace: critical runnable time
	// for the CPU, the acquire wait for a pool.
	WaitMs float64 `json:"measured_wait_ms"`
	// WakeMs is the part of a pool's demand that is runnable time while
	// the connection is held (after its waits end, before it runs).
	WakeMs float64 `json:"wake_ms,omitempty"`
	// HoldCPUMs is the CPU inside a pool's or lock's hold per request,
	// where the input measures it (a JVM hold's cpuTime): part of the
	// demand that also waits for a CPU. The model keeps the hold as
	// measured (docs/method.md §7, "A hold's CPU").
	HoldCPUMs float64 `json:"hold_cpu_ms,omitempty"`
	// HoldSchedMs is the part of such a hold that is neither its CPU nor
	// a recorded wait, per request: its holder waiting for a core, and a
	// lock left free at a hand-off until its next holder ran (holdRisk).
	HoldSchedMs float64 `json:"hold_sched_ms,omitempty"`
	// acquire and hold identify a pool's terms.
	acquire func(budget.Term) bool
	hold    func(budget.Term) bool
	held    float64 // wake-ups per request while the connection is held
}

// PoolSpec names a pool: Name is the frame that acquires it (a frame
// matched as in a prediction) and Size its servers. An empty Name sizes
// the pool recognised by its acquire mechanism (database/sql, pgxpool,
// puddle).
type PoolSpec struct {
	Name string
	Size int
}

// ParsePool parses "NAME:SIZE" or "SIZE".
func ParsePool(s string) (PoolSpec, error) {
	name, size, ok := strings.Cut(s, ":")
	if !ok {
		name, size = "", s
	}
	n, err := strconv.Atoi(size)
	if err != nil || n < 1 || n > 1_000_000 {
		return PoolSpec{}, fmt.Errorf("pool %q: want NAME:SIZE or SIZE with SIZE from 1 to 1000000", s)
	}
	return PoolSpec{Name: name, Size: n}, nil
}

// Inputs are what the trace does not say.
type Inputs struct {
	Task    string     // request type; "" for the group with most requests
	Clients float64    // closed-model clients; 0 estimates them from the trace (Little's law)
	Cores   float64    // cores available; 0 takes GOMAXPROCS from the trace
	Pools   []PoolSpec // pools to model
	// Workers is the server's worker threads: at most Workers requests are
	// inside at once, the others wait in its queue, outside the request.
	// 0 takes them from the input where the server's executor gave them
	// (budget.ServerQueue.Workers), else models no such station.
	Workers int
	// Rate, when positive, makes the workload open: requests arrive at
	// this rate (per second) whatever the latency, as from many
	// independent users; Open with Rate 0 takes the trace's throughput.
	Rate float64
	Open bool
	// ClientsInProcess says the closed model's clients are goroutines of
	// the service's own process (a benchmark's load, an httptest server):
	// their time between requests is the process's goroutines handing the
	// response and the next request to each other, running or waiting for
	// a CPU, so the model takes the think time as the CPU's queue outside
	// the request (Model.ThinkQueueMs).
	ClientsInProcess bool
}

// Model is a request type's closed queueing network as measured.
type Model struct {
	Group            string `json:"group"`
	Requests         int    `json:"requests"`
	Clients          int    `json:"clients"`
	ClientsEstimated bool   `json:"clients_estimated,omitempty"`
	// Rate is the open workload's arrival rate (per second); 0 for the
	// closed model of Clients and ThinkMs.
	Rate    float64 `json:"rate,omitempty"`
	ThinkMs float64 `json:"think_ms"` // clients' time between requests: N/X − R − OutsideCPUMs
	// OutsideCPUMs is the CPU the process spent outside any request, per
	// request that ended (the server's reading and writing, the garbage
	// collector): part of the CPU station's demand, outside the request's
	// latency (docs/method.md §7).
	OutsideCPUMs float64 `json:"outside_cpu_ms"`
	// BeforeMs is the measured time per request its goroutine waited for a
	// CPU before the request began (budget.RunnableBefore): part of the CPU
	// station's queue, not of the think time; beforeShare is its share of
	// all the CPU wait measured, the part of the model's CPU wait that falls
	// before the request (docs/method.md §7, "Before the request").
	BeforeMs    float64 `json:"runnable_before_ms,omitempty"`
	beforeShare float64
	// ThinkRunnableMs is the runnable time per request of the process's
	// goroutines outside any request, less BeforeMs: the server's
	// goroutines between requests, or clients that run in the same
	// process, waiting for a CPU, inside the think time the model keeps
	// unless the clients are in the process (docs/method.md §7, "Clients
	// in the process").
	ThinkRunnableMs float64 `json:"think_runnable_ms,omitempty"`
	// ClientsInProcess says the clients run in the service's process
	// (Inputs.ClientsInProcess); ThinkQueueMs is then the think time the
	// model took as the CPU's queue outside the request (with BeforeMs),
	// which it recomputes in every what-if: all of it, where the model's
	// own CPU queue as recorded explains at least thinkEvidence of the
	// measured wait for a CPU with it; else 0, and the think time is kept.
	ClientsInProcess bool    `json:"clients_in_process,omitempty"`
	ThinkQueueMs     float64 `json:"think_queue_ms,omitempty"`
	// OthersShare is the share of the cores the model takes the machine's
	// other processes to hold from the service (chargeOthers): the CPU's
	// demand is charged by 1 / (1 − OthersShare); 0 where the service's
	// wait shows it lost none. OthersGiven is what they used over the
	// recording (budget.TraceInfo.OtherCPU).
	OthersShare float64 `json:"others_share,omitempty"`
	OthersGiven float64 `json:"others_used,omitempty"`
	// OwnWaitMs is the wait for a CPU the model of the service's own load
	// puts in a request as recorded, against which chargeOthers judges the
	// measured one; set where the others' share is known.
	OwnWaitMs float64 `json:"own_cpu_wait_ms,omitempty"`
	// WakeupMs is runnable time per request that the model's CPU queue does
	// not explain (scheduling latency): kept in every what-if, in the pools'
	// demand for the wake-ups that happen while a connection is held, as a
	// delay for the others.
	WakeupMs float64 `json:"wakeup_ms"`
	// Workers is the server's worker threads (docs/method.md §7, "the
	// server's workers"): 0 when none is modelled; WorkersFrom says where
	// the number came from: "given" (--workers) or "the server's executor"
	// (the Java library's io.latscope.ServerQueue).
	Workers     int    `json:"workers,omitempty"`
	WorkersFrom string `json:"workers_from,omitempty"`
	// ServerQueueMs is the measured time per request in the server's
	// queue before the request began, outside its latency (a JVM recording
	// with io.latscope.ServerQueue); 0 when none was measured.
	ServerQueueMs  float64    `json:"measured_server_queue_ms,omitempty"`
	MeasuredMeanMs float64    `json:"measured_mean_ms"`
	MeasuredRPS    float64    `json:"measured_rps"`
	Resources      []Resource `json:"resources"`
}

// poolMechanisms are mechanisms that wait for a pooled connection or a
// semaphore's permit: a multi-server station whose size is the pool's.
var poolMechanisms = []string{"database/sql.(*DB).conn", "pgxpool.(*Pool).Acquire", "puddle", "HikariPool.getConnection", "ConcurrentBag.borrow",
	"java.util.concurrent.Semaphore.acquire"}

func isPoolMechanism(t budget.Term) bool {
	for _, m := range poolMechanisms {
		if strings.Contains(t.Mechanism, m) {
			return true
		}
	}
	return false
}

// Build measures the model of one request type of res.
func Build(res *budget.Result, in Inputs) (*Model, error) {
	g, err := pickGroup(res, in.Task)
	if err != nil {
		return nil, err
	}
	n := float64(g.Count)
	dur := float64(res.Info.Duration()) / 1e9
	if dur <= 0 {
		return nil, fmt.Errorf("trace has no duration")
	}
	// Throughput counts every request that ended in the window, including
	// those that began before it (cut, and left out of the means); tasks
	// whose type the trace does not record are shared by request count.
	var all int
	for _, h := range res.Groups {
		all += h.Count
	}
	ended := float64(g.Count+g.ExcludedBefore) + float64(res.Info.ExcludedUntyped)*n/float64(max(all, 1))
	m := &Model{Group: g.Name, Requests: g.Count, MeasuredMeanMs: g.Latency.Mean / 1e6, MeasuredRPS: ended / dur}
	// requests in progress on average, by Little's law: in the request, and
	// waiting before it where that was measured — in the server's queue, or
	// for a CPU (the clients below)
	var inside, queued float64
	for _, l := range g.Latencies {
		inside += float64(l)
	}
	inside /= 1e9 * dur
	if q := g.ServerQueue; q != nil {
		queued = q.Queue.Mean * float64(q.Requests) / 1e9 / dur
		m.ServerQueueMs = q.Queue.Mean * float64(q.Requests) / n / 1e6
	}
	switch {
	case in.Workers > 0:
		m.Workers, m.WorkersFrom = in.Workers, "given"
	case g.ServerQueue != nil && g.ServerQueue.Workers > 0:
		m.Workers, m.WorkersFrom = g.ServerQueue.Workers, "the server's executor"
	}
	if b := g.RunnableBefore; b != nil {
		// in the clients' cycle whether or not the model takes it apart
		// (with the server's workers it stays in the think time)
		queued += b.Mean * float64(b.Requests) / 1e9 / dur
		if m.Workers == 0 {
			m.BeforeMs = b.Mean * float64(b.Requests) / n / 1e6
		}
	}
	switch {
	case in.Clients > 0:
		m.Clients = int(math.Round(in.Clients))
	default:
		m.Clients, m.ClientsEstimated = max(1, int(math.Round(inside+queued))), true
	}
	if m.Workers > MaxExactPopulation {
		return nil, fmt.Errorf("%d workers: the model takes at most %d", m.Workers, MaxExactPopulation)
	}
	if m.Workers > 0 && inside > float64(m.Workers) {
		// N workers hold at most N requests at once, so on average too
		return nil, fmt.Errorf("%d workers (%s): request type %q had %.3g requests in progress on average (Little's law), more than %d workers can hold; give the server's real number of workers (--workers N)", m.Workers, m.WorkersFrom, g.Name, inside, m.Workers)
	}
	if in.Open || in.Rate > 0 {
		m.Rate = in.Rate
		if m.Rate <= 0 {
			m.Rate = m.MeasuredRPS
		}
	}
	if m.Clients > MaxExactPopulation {
		return nil, fmt.Errorf("%d clients: the model takes at most %d", m.Clients, MaxExactPopulation)
	}
	m.OutsideCPUMs = outsideCPU(res) / 1e6
	m.ThinkMs = max(0, 1000*float64(m.Clients)/m.MeasuredRPS-m.MeasuredMeanMs-m.OutsideCPUMs-m.BeforeMs)
	if !res.Info.JVM && ended > 0 {
		m.ThinkRunnableMs = min(m.ThinkMs, max(0, float64(res.Outside.ByKind[frame.Runnable])/ended/1e6-m.BeforeMs))
	}
	cores := in.Cores
	if cores <= 0 {
		cores = float64(res.Info.Procs)
	}
	m.Resources = append(m.Resources, Resource{Name: "CPU", Kind: CPU, Servers: max(1, int(math.Round(cores))),
		DemandMs: float64(g.Running.Wait)/n/1e6 + m.OutsideCPUMs, WaitMs: float64(g.Runnable.Critical) / n / 1e6})
	// Each wait ends with a wake-up and runnable time before the goroutine
	// runs. The runnable time the CPU queue does not explain is scheduling
	// latency, taken as the same per wake-up; its share after a pool's
	// acquire and hold waits is time the connection stays held.
	var wakes float64
	for _, ts := range g.Terms {
		if ts.Critical > 0 {
			wakes += float64(ts.Requests) / n
		}
	}
	runnable := float64(g.Runnable.Critical) / n / 1e6
	if res.Info.JVM && g.RunningExact {
		// A JVM recording has no runnable state: the critical time in no
		// recorded wait and not the requests' measured CPU (Group.Unknown)
		// is their wait for a CPU, with waits under JFR's thresholds.
		runnable = max(0, float64(g.Unknown)/n/1e6)
		// A hold the Java library times begins once its thread runs, and
		// holds its own waits for a CPU: no share of that wait is hold time.
		wakes = 0
	}
	accounted := float64(g.Running.Critical) / n / 1e6
	pools := in.Pools
	if len(pools) == 0 {
		for _, ts := range g.Terms {
			if isPoolMechanism(res.Terms[ts.Term]) {
				return nil, fmt.Errorf("request type %q waits for a connection pool or semaphore (%s) whose size is not given (--pool SIZE, or NAME:SIZE)", g.Name, res.Terms[ts.Term].Name())
			}
		}
	}
	for _, ps := range pools {
		r := Resource{Name: ps.Name, Kind: Pool, Servers: ps.Size}
		if ps.Name == "" {
			r.Name = "connection pool"
			r.acquire = isPoolMechanism
		} else {
			name := ps.Name
			r.acquire = func(t budget.Term) bool {
				return t.Frame != "" && budget.MatchName(t.Frame, name) && t.Kind.IsHandOff() || isPoolMechanism(t) && t.Matches(name)
			}
		}
		frames := map[string]bool{}
		for _, ts := range g.Terms {
			if t := res.Terms[ts.Term]; r.acquire(t) {
				frames[t.Frame] = true
				r.WaitMs += float64(ts.Critical) / n / 1e6
			}
		}
		if len(frames) == 0 && ps.Name == "" {
			return nil, fmt.Errorf("pool %q: no wait of request type %q acquires it", r.Name, g.Name)
		}
		acq, named := r.acquire, ps.Name
		r.hold = func(t budget.Term) bool {
			if acq(t) {
				return false
			}
			if named != "" && t.Matches(named) {
				return true
			}
			for f := range frames {
				if t.Matches(f) {
					return true
				}
			}
			return false
		}
		var held float64
		var any bool
		for _, ts := range g.Terms {
			t := res.Terms[ts.Term]
			any = any || r.acquire(t) || r.hold(t)
		}
		if !any {
			return nil, fmt.Errorf("pool %q: no wait of request type %q acquires it or runs beneath it", r.Name, g.Name)
		}
		for _, ts := range g.Terms {
			if t := res.Terms[ts.Term]; r.hold(t) || r.acquire(t) && ts.Critical > 0 {
				held += float64(ts.Requests) / n
				if r.hold(t) {
					r.DemandMs += float64(ts.Critical) / n / 1e6
					r.HoldCPUMs += float64(ts.CPU) / n / 1e6
					if t.Kind == frame.Running && ts.CPU > 0 {
						r.HoldSchedMs += float64(max(0, ts.Critical-ts.CPU)) / n / 1e6
					}
				}
			}
		}
		r.held = held
		accounted += r.WaitMs + r.DemandMs
		m.Resources = append(m.Resources, r)
	}
	m.Resources = append(m.Resources, Resource{Name: "delays", Kind: Delays, DemandMs: max(0, m.MeasuredMeanMs-accounted-runnable)})
	m.Resources[0].WaitMs = runnable
	base := m.Resources[len(m.Resources)-1].DemandMs
	m.ClientsInProcess = in.ClientsInProcess
	if in.ClientsInProcess && m.ThinkMs > 0 && m.Workers == 0 && m.Rate == 0 {
		// The clients' time between requests is the CPU's queue where the
		// model's own queue is (thinkEvidence); else it stays think time.
		m.ThinkQueueMs, m.ThinkMs = m.ThinkMs, 0
		own, err := m.fit(runnable, wakes, base)
		if err != nil {
			return nil, err
		}
		if own < thinkEvidence*(runnable+m.outsideWait()) {
			m.ThinkMs, m.ThinkQueueMs = m.ThinkQueueMs, 0
		}
	}
	if err := m.chargeOthers(res.Info.OtherCPU, runnable+m.outsideWait()); err != nil {
		return nil, err
	}
	if _, err := m.fit(runnable, wakes, base); err != nil {
		return nil, err
	}
	if m.Workers > 0 && m.Rate == 0 {
		if err := m.thinkBesideWorkers(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// thinkEvidence is the least share of the measured wait for a CPU (in the
// requests, before them, and the clients' think time) that the model's own
// queue must explain for the think time of clients in the process to be
// taken as that queue (Model.ThinkQueueMs): below it most of the wait is
// scheduling latency, or not the CPU's at all, which no change in load
// moves.
const thinkEvidence = 0.25

// fit sets the share of the CPU's queue that falls outside the request and
// fits the scheduling latency (WakeupMs): the measured wait for a CPU that
// the model's own queue does not explain, spread over the wake-ups (the
// share of the pools' holds held time, the rest a delay on top of base).
// runnable is the requests' measured wait for a CPU, wakes their wake-ups
// per request. It returns the model's own wait for a CPU.
func (m *Model) fit(runnable, wakes, base float64) (own float64, err error) {
	m.beforeShare = 0
	if outside := m.outsideWait(); outside > 0 {
		m.beforeShare = outside / (runnable + outside)
	}
	delay := &m.Resources[len(m.Resources)-1]
	for range 8 {
		st, err := m.solve()
		if err != nil {
			return 0, err
		}
		own = max(0, st.Resources[0].ResidenceMs-m.Resources[0].DemandMs)
		m.WakeupMs = max(0, runnable+m.outsideWait()-own)
		perWake := 0.0
		if wakes > 0 {
			perWake = m.WakeupMs / wakes
		}
		rest := m.WakeupMs
		for i := range m.Resources {
			if r := &m.Resources[i]; r.Kind == Pool {
				r.DemandMs += perWake*r.held - r.WakeMs
				r.WakeMs = perWake * r.held
				rest -= r.WakeMs
			}
		}
		delay.DemandMs = base + max(0, rest)
	}
	return own, nil
}

// outsideWait is the measured wait for a CPU per request outside the
// request: before it began (BeforeMs) and, with the clients in the
// process, their time between the requests (ThinkQueueMs). It is part of
// the CPU station's queue and of the clients' cycle, not of the request's
// latency.
func (m *Model) outsideWait() float64 { return m.BeforeMs + m.ThinkQueueMs }

// maxOthers bounds the share of the cores the model lets other processes
// take (chargeOthers): the CPU's demand is charged at most 20-fold.
const maxOthers = 0.95

// othersEvidence is the share of the measured mean by which the service's
// wait for a CPU must exceed what its own load explains before the model
// takes the machine's other processes to have held cores from it
// (chargeOthers): compare's bar, so that noise in that wait cannot charge
// the CPU.
const othersEvidence = 0.05

// chargeOthers charges the CPU station's demand at the part of the cores
// the service had beside the machine's other processes, D / (1 − share),
// as a background utilisation enters a station's demand, the others'
// share being what they used over the recording (given: jdk.CPULoad's
// machine less the JVM). Others below the service's priority, or
// spinning on cores it leaves idle, use that share without taking it from
// the service; so the charge is made only where the service's own wait
// for a CPU (measured: the requests' runnable time, before them too) is
// longer than the model of its own load explains (the model solved as
// recorded, without others) by more than othersEvidence of the mean. It
// is kept in every what-if: the others are taken to go on using what they
// used (docs/method.md §7, "Other processes").
func (m *Model) chargeOthers(given, measured float64) error {
	if given <= 0 {
		return nil
	}
	m.OthersGiven = given // known, charged or not
	if measured <= 0 {
		return nil
	}
	st, err := m.solve()
	var unstable *UnstableError
	if errors.As(err, &unstable) {
		return nil // an open model the service cannot keep up with: nothing to fit
	}
	if err != nil {
		return err
	}
	cpu := &m.Resources[0]
	own := max(0, st.Resources[0].ResidenceMs-cpu.DemandMs)
	m.OwnWaitMs = own
	if measured-own < othersEvidence*m.MeasuredMeanMs {
		return nil
	}
	m.OthersShare = min(given, maxOthers)
	cpu.DemandMs /= 1 - m.OthersShare
	return nil
}

// thinkBesideWorkers takes out of the think time the wait for a worker
// the model puts before the request, up to the measured server queue: the
// cycle N/X holds the queue, and the model recomputes it. The rest of the
// measured queue (the hand-off to the executor and the reading of the
// headers while a worker was free) stays in the think time, a delay the
// model does not change.
func (m *Model) thinkBesideWorkers() error {
	z := m.ThinkMs
	for range 16 {
		st, err := m.solve()
		if err != nil {
			return err
		}
		next := max(0, z-min(st.ServerQueueMs, m.ServerQueueMs))
		if math.Abs(next-m.ThinkMs) < 1e-9 {
			break
		}
		m.ThinkMs = next
	}
	return nil
}

// outsideCPU is the CPU, in ns, the process spent outside any request,
// per request that ended in the window. By the utilization law (D = U/X)
// a request's CPU demand is all the CPU the process spends per request:
// its own running time plus this share (the server's reading and
// writing, the garbage collector, requests cut by the window's edges).
// A request type's capacity is bounded by all of it, not only the part
// inside its task. On a JVM recording the process's CPU is the JVM's in
// jdk.CPULoad (its clients in the same JVM, the server's dispatcher, the
// collector, the compiler, the recorder), and the requests' own is the
// Java library's measured thread CPU; without it (samples only) the
// inside is not known: 0.
func outsideCPU(res *budget.Result) float64 {
	var inside int64
	ended := res.Info.ExcludedUntyped
	for _, h := range res.Groups {
		inside += h.Running.Wait
		ended += h.Count + h.ExcludedBefore
	}
	outside := res.Info.ProcBusy - inside
	if outside <= 0 || ended == 0 || res.Info.JVM && !exactCPU(res) {
		return 0
	}
	return float64(outside) / float64(ended)
}

func pickGroup(res *budget.Result, task string) (*budget.Group, error) {
	for _, g := range res.Groups {
		if g.Count > 0 && (task == "" || g.Name == task) {
			return g, nil
		}
	}
	if task != "" {
		return nil, fmt.Errorf("no finished request of type %q", task)
	}
	return nil, fmt.Errorf("no finished request in the trace")
}

// network returns the closed network of m with the given changes.
func (m *Model) network() Network {
	net := Network{Think: m.ThinkMs / 1000}
	for _, r := range m.Resources {
		s := Station{Name: r.Name, Demand: r.DemandMs / 1000, Servers: r.Servers}
		if r.Kind == Delays || r.Servers <= 0 {
			s.Kind = Delay
		}
		net.Stations = append(net.Stations, s)
	}
	return net
}

func (m *Model) clone() *Model {
	c := *m
	c.Resources = append([]Resource(nil), m.Resources...)
	return &c
}

// exactCPU reports whether every request type's running time is measured
// thread CPU (a JVM recording with the Java library's cpuTime).
func exactCPU(res *budget.Result) bool {
	for _, g := range res.Groups {
		if g.Count > 0 && !g.RunningExact {
			return false
		}
	}
	return len(res.Groups) > 0
}
