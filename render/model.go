package render

import (
	"regexp"
	"time"

	"github.com/latscope/latscope/budget"
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
	// Cores is the CPU capacity for the CPU cap; 0 uses GOMAXPROCS from the trace.
	Cores float64
	// Pool is a connection-pool size for the pool cap; 0 means no pool cap.
	Pool int
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

// Report is the derived, printable form of a result. Field names and units
// are those of the JSON output.
type Report struct {
	Trace    TraceJSON          `json:"trace"`
	Requests RequestsJSON       `json:"requests"`
	Terms    []TermJSON         `json:"terms"`
	CPU      CPUJSON            `json:"cpu"`
	Coverage CoverageJSON       `json:"coverage"`
	Groups   []GroupJSON        `json:"groups"`
	Outside  map[string]float64 `json:"outside_ms"`
	Findings []FindingJSON      `json:"findings"`
	// Sched is the scheduler-overhead analysis (package sched), when run.
	Sched    any `json:"sched,omitempty"`
	minShare float64
	tree     bool
}

// TraceJSON describes the input.
type TraceJSON struct {
	File            string  `json:"file"`
	DurationMs      float64 `json:"duration_ms"`
	Records         int64   `json:"records"`
	Generations     int     `json:"generations"`
	Goroutines      int     `json:"goroutines"`
	GOMAXPROCS      int     `json:"gomaxprocs"`
	ProcBusyPct     float64 `json:"proc_busy_pct"`
	CPUSamples      int     `json:"cpu_samples"`
	Tasks           int     `json:"tasks"`
	ExcludedUntyped int     `json:"excluded_untyped"`
	Inferred        bool    `json:"inferred"`
	StartWall       string  `json:"start_wall,omitempty"`
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
}

// RequestsJSON summarises a group's latencies.
type RequestsJSON struct {
	Count          int     `json:"count"`
	Excluded       int     `json:"excluded"`
	ExcludedBefore int     `json:"excluded_before"`
	ExcludedAfter  int     `json:"excluded_after"`
	Forked         int     `json:"forked"`
	MeanMs         float64 `json:"mean_ms"`
	StdDevMs       float64 `json:"stddev_ms"`
	MinMs          float64 `json:"min_ms"`
	P50Ms          float64 `json:"p50_ms"`
	P90Ms          float64 `json:"p90_ms"`
	P99Ms          float64 `json:"p99_ms"`
	MaxMs          float64 `json:"max_ms"`
	RPS            float64 `json:"rps"`
	// the unrounded values that comparisons compute with
	mean, p99 time.Duration
	rps       float64
}

// TermJSON is one budget row, per request.
type TermJSON struct {
	// Name is the display name: the shortest suffix of AppPath that is
	// unique among the trace's terms ("ListOrders › query").
	Name  string `json:"name"`
	Frame string `json:"frame"`
	// AppPath is the application call path, outermost first, ending at Frame.
	AppPath        []string           `json:"app_path"`
	Mechanism      string             `json:"mechanism"`
	Kind           string             `json:"kind"`
	WaitMs         float64            `json:"wait_ms"`
	SharePct       float64            `json:"share_pct"`
	CriticalMs     float64            `json:"critical_ms"`
	CriticalPct    float64            `json:"critical_pct"`
	FixPotentialMs float64            `json:"fix_potential_ms"`
	ContentionMs   float64            `json:"contention_ms"`
	Requests       int                `json:"requests"`
	CausesMs       map[string]float64 `json:"causes_ms,omitempty"`
	critical       time.Duration      // unrounded CriticalMs
}

// CPUJSON is CPU time per request.
type CPUJSON struct {
	RunningMs          float64  `json:"running_ms"`
	RunnableMs         float64  `json:"runnable_ms"`
	CriticalRunningMs  float64  `json:"critical_running_ms"`
	CriticalRunnableMs float64  `json:"critical_runnable_ms"`
	IndependentMs      *float64 `json:"independent_ms"`
	// unrounded CriticalRunningMs and CriticalRunnableMs
	critRunning, critRunnable time.Duration
}

// CoverageJSON says how much of the mean latency each view explains.
type CoverageJSON struct {
	WaitSumPct      float64  `json:"wait_sum_pct"`
	GoroutineSumPct float64  `json:"goroutine_sum_pct"`
	CriticalPct     float64  `json:"critical_pct"`
	UnknownMs       float64  `json:"unknown_ms"`
	IndependentPct  *float64 `json:"independent_pct"`
	UnexplainedMs   *float64 `json:"unexplained_ms"`
}

// GroupJSON is one request type.
type GroupJSON struct {
	Name        string           `json:"name"`
	Inferred    bool             `json:"inferred"`
	Requests    RequestsJSON     `json:"requests"`
	Terms       []TermJSON       `json:"terms"`
	CPU         CPUJSON          `json:"cpu"`
	Coverage    CoverageJSON     `json:"coverage"`
	Regions     []RegionJSON     `json:"regions"`
	Predictions []PredictionJSON `json:"predictions"`
	Throughput  ThroughputJSON   `json:"throughput"`
	Slowest     *PathJSON        `json:"slowest_path,omitempty"`
	Median      *PathJSON        `json:"median_path,omitempty"`
	forks       bool
	cov         budget.Coverage
}

// RegionJSON is time inside a runtime/trace region, per request.
type RegionJSON struct {
	Name       string  `json:"name"`
	WallMs     float64 `json:"wall_ms"`
	WallPct    float64 `json:"wall_pct"`
	CPUSamples int     `json:"cpu_samples"`
	CPUPct     float64 `json:"cpu_pct"`
}

// PredictionJSON is one what-if.
type PredictionJSON struct {
	Spec string `json:"spec"`
	// MeanMs is the predicted mean: the simulated one, or when the capped
	// throughput cannot serve the clients at it, clients / rps (Little's
	// law for a closed model: the requests queue at the cap).
	MeanMs   float64 `json:"mean_ms"`
	P99Ms    float64 `json:"p99_ms"` // 0 when the requests queue: not predicted
	DeltaPct float64 `json:"delta_pct"`
	RPS      float64 `json:"rps"`
	Limit    string  `json:"limit"`
	// SimulatedMeanMs is the mean of the requests' re-simulated timelines;
	// QueueMs is what MeanMs adds to it for the queue at the cap.
	SimulatedMeanMs float64 `json:"simulated_mean_ms"`
	QueueMs         float64 `json:"queue_ms"`
	// unrounded MeanMs, P99Ms and RPS
	mean, p99 time.Duration
	rps       float64
}

// ThroughputJSON states the closed-model inputs used for rps predictions.
type ThroughputJSON struct {
	Clients          float64 `json:"clients"`
	ClientsEstimated bool    `json:"clients_estimated"`
	Cores            float64 `json:"cores"`
	CPUPerRequestMs  float64 `json:"cpu_per_request_ms"`
	CPUCapRPS        float64 `json:"cpu_cap_rps"`
	Pool             int     `json:"pool,omitempty"`
	PoolHoldMs       float64 `json:"pool_hold_ms,omitempty"`
	PoolCapRPS       float64 `json:"pool_cap_rps,omitempty"`
	MeasuredRPS      float64 `json:"measured_rps"`
	PredictedRPS     float64 `json:"predicted_rps"`
}

// PathJSON is a critical path, in time order.
type PathJSON struct {
	Task       uint64        `json:"task"`
	LatencyMs  float64       `json:"latency_ms"`
	Goroutines int           `json:"goroutines"`
	Segments   []SegmentJSON `json:"segments"`
}

// SegmentJSON is one piece of a critical path.
type SegmentJSON struct {
	StartMs    float64 `json:"start_ms"` // from the request's start
	DurMs      float64 `json:"dur_ms"`
	Goroutine  int64   `json:"goroutine"`
	Kind       string  `json:"kind"`
	Term       string  `json:"term,omitempty"`
	Borrowed   bool    `json:"borrowed,omitempty"`
	Contention bool    `json:"contention,omitempty"`
	Unknown    bool    `json:"unknown,omitempty"`
}

// FindingJSON is a finding.
type FindingJSON struct {
	Kind   string `json:"kind"`
	Group  string `json:"group,omitempty"`
	Text   string `json:"text"`
	Refuse bool   `json:"refuse"`
}

var _ = budget.DefaultOptions
