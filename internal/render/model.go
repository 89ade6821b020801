package render

import (
	"regexp"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/whatif"
)

// Inputs are the facts beside the trace that a report may use.
type Inputs struct {
	File string
	// CPUSeconds is the process's CPU time (utime+stime) over the trace
	// window from an instrument independent of the tracer; < 0 when
	// unknown, and then the agent's CPU counter log in the trace is used
	// when it can stand for the window (budget.CPULog.Window).
	CPUSeconds float64
	// Clients is the closed-model client count for throughput predictions;
	// 0 estimates it from the trace (Σ latency / window, Little's law).
	Clients float64
	// ClientsInProcess says the clients run in the service's process
	// (whatif.Inputs.ClientsInProcess).
	ClientsInProcess bool
	// Cores is the CPU capacity for the CPU cap; 0 uses GOMAXPROCS from the trace.
	Cores float64
	// Workers is the server's worker threads for the queueing model; 0
	// takes them from the input where it has them (whatif.Inputs).
	Workers int
	// Pool is a connection-pool size for the pool cap; 0 means no pool cap.
	Pool int
	// Pools are the pools the queueing model takes (whatif.Inputs.Pools):
	// named by the frame that acquires them (a lock as NAME:1), or by SIZE
	// alone the pool recognised by its acquire wait. Pool stays the closed
	// model's cap.
	Pools []queueing.PoolSpec
	// Specs, when set, are the what-ifs as given, each evaluated by the one
	// prediction engine (whatif.Evaluate: the queueing model where a queue
	// is in play, the timeline simulation where none is); the timeline ones
	// must be among budget.Options.Predictions. Unset, the predictions are
	// the timeline simulation's with the closed model's caps.
	Specs []whatif.Spec
	// Demands, when set, is the result the prediction engine reads the
	// model's demands from instead of the report's: the same groups and
	// terms, with a JVM recording's demands read as every command reads
	// them (cmd/latscope: all thread CPU, a lock's hand-off gap). The
	// report's own terms are never taken from it.
	Demands *budget.Result
	// Task keeps only this request type; "" keeps all.
	Task string
	// Frame keeps only terms whose application frame matches.
	Frame *regexp.Regexp
	// MinShare folds terms under this share of the mean (percent) into one
	// row in text output. JSON always lists every term.
	MinShare float64
	// Tree adds to the text output the waits rolled up by call path.
	Tree bool
	// App are the package prefixes the user named as the application
	// (frame.Rules.App); nil when the default rule chose.
	App []string
}

// Report is the report model: every number derived from an analysis that
// a writer prints — latencies, budget rows, CPU, coverage, regions,
// closed-model throughput and predictions, critical paths, findings. Times
// are Durations (kept to the nanosecond), shares percent; the text, JSON,
// HTML and pprof writers and the lab only format it. The JSON field names
// are the schema of docs/json.md; a Duration is encoded as milliseconds.
type Report struct {
	Trace    Trace               `json:"trace"`
	Requests Requests            `json:"requests"`
	Terms    []Term              `json:"terms"`
	CPUTerms []Term              `json:"cpu_terms"`
	CPU      CPU                 `json:"cpu"`
	Coverage Coverage            `json:"coverage"`
	Groups   []Group             `json:"groups"`
	Outside  map[string]Duration `json:"outside_ms"`
	Findings []Finding           `json:"findings"`
	// Sched is the scheduler-overhead analysis (package sched), when run.
	Sched    any `json:"sched,omitempty"`
	minShare float64
	tree     bool
}

// Trace describes the input.
type Trace struct {
	File        string   `json:"file"`
	Duration    Duration `json:"duration_ms"`
	Records     int64    `json:"records"`
	Generations int      `json:"generations"`
	Goroutines  int      `json:"goroutines"`
	GOMAXPROCS  int      `json:"gomaxprocs"`
	ProcBusyPct float64  `json:"proc_busy_pct"`
	// ProcCPUShare is the CPU the Ps' threads had per second of the Ps'
	// running time, from the CPU samples, and ProcCPUShareBound how far it
	// may be off (budget.TraceInfo.ProcCPUShare); absent without enough
	// samples.
	ProcCPUShare      *float64 `json:"proc_cpu_share,omitempty"`
	ProcCPUShareBound *float64 `json:"proc_cpu_share_bound,omitempty"`
	CPUSamples        int      `json:"cpu_samples"`
	Tasks             int      `json:"tasks"`
	ExcludedUntyped   int      `json:"excluded_untyped"`
	// OrphanTasks are tasks excluded as pieces of requests the trace cut
	// (their parent task began before it); ExcludedUnrouted requests open
	// at its end whose route (a latscope.route log) was not logged yet.
	OrphanTasks      int  `json:"orphan_tasks,omitempty"`
	ExcludedUnrouted int  `json:"excluded_unrouted,omitempty"`
	Inferred         bool `json:"inferred"`
	// JVM: the input is a JVM recording (package jfr), whose threads are
	// the goroutines and hardware threads the Ps; running and runnable
	// time are not measured there.
	JVM       bool   `json:"jvm,omitempty"`
	StartWall string `json:"start_wall,omitempty"`
	// AppRule says which rule chose the application frames.
	AppRule string `json:"app_rule"`
	// Module is the main module taken as the application ("" by default).
	Module string `json:"main_module,omitempty"`
	// FallbackTerms counts terms whose stack had no frame of the service's
	// own source, attributed by function name to a dependency's frame.
	FallbackTerms int `json:"fallback_terms"`
	// CPUSeconds is the process's CPU time over the window by the
	// independent counter the report used; absent without one.
	CPUSeconds *float64 `json:"cpu_seconds,omitempty"`
	// CPUSource says where CPUSeconds came from: "given" (by the caller:
	// a flag, or capture's metrics) or "agent-log" (the agent's counter
	// log in the trace, scaled from the span it covers to the window).
	CPUSource string `json:"cpu_source,omitempty"`
	// CPUNote says why the trace's own counter log gave no reading, when
	// it has one and nothing else was given.
	CPUNote string `json:"cpu_note,omitempty"`
	// CPUByFrame says where the frames of running time (cpu_terms) come
	// from: "cpu-samples" (the CPU profile samples the trace carries) or
	// "state-stacks" (no sample in the trace: the stacks where goroutines
	// resumed and stopped, an estimate); CPUFrameSamples counts the samples
	// that fell in a goroutine's running time. Absent for a JVM recording.
	CPUByFrame      string `json:"cpu_by_frame,omitempty"`
	CPUFrameSamples *int   `json:"cpu_frame_samples,omitempty"`
}

// Transport is the estimated time outside a group's requests on the
// server (docs/method.md §2): before (the connection's read → the request)
// and after (the request → the response's write), each a mean over the
// requests it was seen for.
type Transport struct {
	Before  Duration `json:"before_ms"`
	After   Duration `json:"after_ms"`
	BeforeN int      `json:"before_requests"`
	AfterN  int      `json:"after_requests"`
}

// RunnableBefore is the time a group's requests waited for a CPU before
// they began (docs/method.md §7, "Before the request"): the runnable time
// of the goroutine that began each request, since the request arrived.
type RunnableBefore struct {
	Requests int      `json:"requests"`
	Mean     Duration `json:"mean_ms"`
}

// ServerQueue is the time a group's requests waited in the server before
// they began (a JVM HTTP server's executor, io.latscope.ServerQueue),
// outside their latency, and the server's workers.
type ServerQueue struct {
	Requests int      `json:"requests"`
	Mean     Duration `json:"mean_ms"`
	P99      Duration `json:"p99_ms"`
	// Workers is the threads the server's executor serves with; absent
	// when it did not say or is unbounded.
	Workers int `json:"workers,omitempty"`
}

// Requests summarises a group's latencies.
type Requests struct {
	Count          int      `json:"count"`
	Excluded       int      `json:"excluded"`
	ExcludedBefore int      `json:"excluded_before"`
	ExcludedAfter  int      `json:"excluded_after"`
	Forked         int      `json:"forked"`
	Mean           Duration `json:"mean_ms"`
	StdDev         Duration `json:"stddev_ms"`
	Min            Duration `json:"min_ms"`
	P50            Duration `json:"p50_ms"`
	P90            Duration `json:"p90_ms"`
	P99            Duration `json:"p99_ms"`
	Max            Duration `json:"max_ms"`
	RPS            float64  `json:"rps"`
	rps            float64  // unrounded RPS, for comparisons
	noLatency      bool     // a JVM recording without latencies: JSON null (jvm.go)
}

// Term is one budget row, per request.
type Term struct {
	// Name is the display name: the shortest suffix of AppPath that is
	// unique among the trace's terms ("ListOrders › query").
	Name  string `json:"name"`
	Frame string `json:"frame"`
	// AppPath is the application call path, outermost first, ending at Frame.
	AppPath      []string `json:"app_path"`
	Mechanism    string   `json:"mechanism"`
	Kind         string   `json:"kind"`
	Wait         Duration `json:"wait_ms"`
	SharePct     float64  `json:"share_pct"`
	Critical     Duration `json:"critical_ms"`
	CriticalPct  float64  `json:"critical_pct"`
	FixPotential Duration `json:"fix_potential_ms"`
	// Along, for a frame's CPU: the plain running time on the critical
	// path that went along with it (Go counted the thread running while no
	// CPU sample saw it: another thread had the CPU), shared among the
	// frames by their samples; part of FixPotential, not of Critical.
	Along      Duration            `json:"along_ms,omitempty"`
	Contention Duration            `json:"contention_ms"`
	Requests   int                 `json:"requests"`
	Causes     map[string]Duration `json:"causes_ms,omitempty"`
	// RootCauses name the causes of the critical time that goroutines
	// outside the request explain, followed through hand-offs
	// (docs/method.md §4): the blocking frame at the end of the chain.
	RootCauses []RootCause `json:"root_causes,omitempty"`
	// Beneath marks the CPU of a frame estimated from the stacks at state
	// changes: it ran beneath the frame, in it or in a function it called
	// that returned (a CPU term from samples is the frame's own).
	Beneath   bool `json:"beneath,omitempty"`
	noLatency bool // no mean to share: JSON null (jvm.go)
}

// RootCause is a root cause of a term's critical time: what a goroutine
// outside the request, at the end of a chain of hand-offs, was blocked in.
type RootCause struct {
	Name      string   `json:"name"` // "frame [mechanism, kind]"
	Frame     string   `json:"frame"`
	AppPath   []string `json:"app_path"`
	Mechanism string   `json:"mechanism"`
	Kind      string   `json:"kind"`
	Critical  Duration `json:"critical_ms"` // per request
	// Hops: goroutines between the request's wait and the cause's (0: the
	// one that ended the wait was itself blocked in it).
	Hops int `json:"hops"`
}

// CPU is CPU time per request.
type CPU struct {
	Running          Duration  `json:"running_ms"`
	Runnable         Duration  `json:"runnable_ms"`
	CriticalRunning  Duration  `json:"critical_running_ms"`
	CriticalRunnable Duration  `json:"critical_runnable_ms"`
	Independent      *Duration `json:"independent_ms"`
	// ByFrame splits Running by how its frame was found (cpu_terms hold
	// the frames); nil for a JVM recording.
	ByFrame     *CPUByFrame `json:"by_frame,omitempty"`
	notMeasured bool        // a JVM recording: running and runnable JSON null (jvm.go)
	// runningExact: in a JVM recording, running is the Java library's
	// measured thread CPU (budget.Group.RunningExact); runnable alone is
	// not measured.
	runningExact bool
}

// CPUByFrame is how a request's running time was split by frame
// (docs/method.md §3, "CPU by frame"): FromSamples + FromStacks +
// Unattributed = CPU.Running, and CriticalAttributed +
// CriticalUnattributed = CPU.CriticalRunning.
type CPUByFrame struct {
	FromSamples          Duration `json:"from_samples_ms"`
	FromStacks           Duration `json:"from_stacks_ms"`
	Unattributed         Duration `json:"unattributed_ms"`
	CriticalAttributed   Duration `json:"critical_attributed_ms"`
	CriticalUnattributed Duration `json:"critical_unattributed_ms"`
}

// Coverage says how much of the mean latency each view explains.
type Coverage struct {
	WaitSumPct      float64   `json:"wait_sum_pct"`
	GoroutineSumPct float64   `json:"goroutine_sum_pct"`
	CriticalPct     float64   `json:"critical_pct"`
	Unknown         Duration  `json:"unknown_ms"`
	IndependentPct  *float64  `json:"independent_pct"`
	Unexplained     *Duration `json:"unexplained_ms"`
	noLatency       bool      // no mean to share: JSON null (jvm.go)
}

// Group is one request type.
type Group struct {
	Name        string       `json:"name"`
	Inferred    bool         `json:"inferred"`
	Requests    Requests     `json:"requests"`
	Terms       []Term       `json:"terms"`
	CPUTerms    []Term       `json:"cpu_terms"`
	CPU         CPU          `json:"cpu"`
	Coverage    Coverage     `json:"coverage"`
	Regions     []Region     `json:"regions"`
	Predictions []Prediction `json:"predictions"`
	Throughput  Throughput   `json:"throughput"`
	Slowest     *Path        `json:"slowest_path,omitempty"`
	Median      *Path        `json:"median_path,omitempty"`
	// Transport is the time outside the requests that grpc-go's transport
	// goroutines show, per request; absent for other servers.
	Transport *Transport `json:"transport,omitempty"`
	// ServerQueue is the time the requests waited in the server before
	// they began, outside their latency; absent where the input does not
	// record it.
	ServerQueue *ServerQueue `json:"server_queue,omitempty"`
	// RunnableBefore is the time the requests waited for a CPU before they
	// began, outside their latency (a Go trace's task requests); absent
	// when none did.
	RunnableBefore *RunnableBefore `json:"runnable_before,omitempty"`
	// SlowTraces are the slowest requests with a trace ID (their
	// latscope.request log), slowest first; TracedRequests counts the
	// group's requests with one. Absent when none has.
	SlowTraces     []SlowTrace `json:"slow_traces,omitempty"`
	TracedRequests int         `json:"traced_requests,omitempty"`
	forks          bool
	whatIfErr      error // the engine's refusal of a what-if for this group
	cov            budget.Coverage
}

// Region is time inside a runtime/trace region, per request.
type Region struct {
	Name       string   `json:"name"`
	Wall       Duration `json:"wall_ms"`
	WallPct    float64  `json:"wall_pct"`
	CPUSamples int      `json:"cpu_samples"`
	CPUPct     float64  `json:"cpu_pct"`
}

// Prediction is one what-if.
type Prediction struct {
	Spec string `json:"spec"`
	// MeanMs is the predicted mean: the simulated one, or when the capped
	// throughput cannot serve the clients at it, clients / rps (Little's
	// law for a closed model: the requests queue at the cap).
	Mean     Duration `json:"mean_ms"`
	P99      Duration `json:"p99_ms"` // 0 when the requests queue: not predicted
	DeltaPct float64  `json:"delta_pct"`
	RPS      float64  `json:"rps"`
	Limit    string   `json:"limit"`
	// SimulatedMeanMs is the mean of the requests' re-simulated timelines;
	// QueueMs is what MeanMs adds to it for the queue at the cap.
	SimulatedMean Duration `json:"simulated_mean_ms"`
	Queue         Duration `json:"queue_ms"`
	// Method is how the engine predicted (whatif.Method: "timeline
	// simulation" or "queueing model") and Why the reason; MeanLow and
	// MeanHigh the mean's 95 % interval, absent when there is none (too few
	// requests, no per-request series). All four are absent when the
	// engine did not run (Inputs.Specs unset).
	Method   string    `json:"method,omitempty"`
	Why      string    `json:"why,omitempty"`
	MeanLow  *Duration `json:"mean_low_ms,omitempty"`
	MeanHigh *Duration `json:"mean_high_ms,omitempty"`
	rps      float64   // unrounded RPS, for comparisons
	// se and df are the engine's standard error of Mean (ns) and its
	// degrees of freedom, for compare's verdict; interval is false when
	// the engine gave none (or did not run).
	se, df   float64
	interval bool
}

// Throughput states the closed-model inputs used for rps predictions.
type Throughput struct {
	Clients          float64  `json:"clients"`
	ClientsEstimated bool     `json:"clients_estimated"`
	Cores            float64  `json:"cores"`
	CPUPerRequest    Duration `json:"cpu_per_request_ms"`
	CPUCapRPS        float64  `json:"cpu_cap_rps"`
	Pool             int      `json:"pool,omitempty"`
	PoolHold         Duration `json:"pool_hold_ms,omitempty"`
	PoolCapRPS       float64  `json:"pool_cap_rps,omitempty"`
	MeasuredRPS      float64  `json:"measured_rps"`
	PredictedRPS     float64  `json:"predicted_rps"`
}

// SlowTrace is one slow request and the trace ID a tracing UI shows for it.
type SlowTrace struct {
	TraceID string   `json:"trace_id"`
	Latency Duration `json:"latency_ms"`
	Task    uint64   `json:"task"`
}

// Path is a critical path, in time order.
type Path struct {
	Task       uint64    `json:"task"`
	TraceID    string    `json:"trace_id,omitempty"`
	Latency    Duration  `json:"latency_ms"`
	Goroutines int       `json:"goroutines"`
	Segments   []Segment `json:"segments"`
}

// Segment is one piece of a critical path.
type Segment struct {
	Start      Duration `json:"start_ms"` // from the request's start
	Dur        Duration `json:"dur_ms"`
	Goroutine  int64    `json:"goroutine"`
	Kind       string   `json:"kind"`
	Term       string   `json:"term,omitempty"`
	Borrowed   bool     `json:"borrowed,omitempty"`
	Contention bool     `json:"contention,omitempty"`
	Unknown    bool     `json:"unknown,omitempty"`
	// Cause, for borrowed time, is what the goroutine was blocked in
	// ("frame [mechanism, kind]") when its stack has an application frame;
	// Via are the goroutines between the request's wait and it, nearest the
	// request first, with what each waited for.
	Cause string `json:"cause,omitempty"`
	Via   []Hop  `json:"via,omitempty"`
}

// Hop is one goroutine of a chain of hand-offs and what it waited for.
type Hop struct {
	Goroutine int64  `json:"goroutine"`
	Kind      string `json:"kind"`
}

// Finding is a finding.
type Finding struct {
	Kind   string `json:"kind"`
	Group  string `json:"group,omitempty"`
	Text   string `json:"text"`
	Refuse bool   `json:"refuse"`
}

var _ = budget.DefaultOptions
