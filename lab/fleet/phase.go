package fleet

import (
	"time"

	"github.com/latscope/latscope/lab"
)

// The phases, in the order they run.
const (
	PhaseThrottle = "throttle" // periodic CFS throttling of one instance
	PhaseLock     = "lock"     // a table lock in the shared database
	PhaseStop     = "stop"     // one instance stopped (SIGSTOP)
	PhaseNone     = "none"     // no fault
	// The phases of issue #35, in the default profile only.
	PhaseUpstream   = "upstream"   // the upstream of RouteQuote slowed for every instance
	PhaseContinuous = "continuous" // a lock held for the whole phase, the DB-call p95 hovering at the threshold
	PhaseGC         = "gc"         // one instance allocating: GC-bound, under the threshold, far over its peers
	PhaseThin       = "thin"       // a route with a few requests per step slowed
)

// AllPhases are the phases of the default profile, in the order they run;
// ShortPhases those of --short (the CI profile).
var (
	AllPhases   = []string{PhaseThrottle, PhaseLock, PhaseStop, PhaseNone, PhaseUpstream, PhaseContinuous, PhaseGC, PhaseThin}
	ShortPhases = []string{PhaseThrottle, PhaseLock, PhaseStop, PhaseNone}
)

// Truth is what a phase did, in triage's terms: the verdict a right
// triage gives.
type Truth struct {
	Scope    string        `json:"scope"`              // "local", "shared" or "none"
	Instance string        `json:"instance,omitempty"` // the faulted instance when local
	DBPath   string        `json:"db_path,omitempty"`  // "db-only" or "all-requests"; "" = not judged
	Period   time.Duration `json:"period_ns,omitempty"`
	Cause    string        `json:"cause,omitempty"` // "throttled" or "stalled" when local
	// Dependency is what slowed, in triage's words ("database",
	// "outbound", "host"; "" = not judged), and Route the route whose
	// outbound calls did.
	Dependency string `json:"dependency,omitempty"`
	Route      string `json:"route,omitempty"`
	// Continuous says the fault was held without a pause: a right triage
	// claims no period (Period is then 0).
	Continuous bool `json:"continuous,omitempty"`
	// Rule is a rule of triage's rule 1 that must have made some of the
	// verdict's bad steps bad ("peer": under the threshold, far over the
	// peers); "" = not judged.
	Rule string `json:"rule,omitempty"`
	// Thin says the phase's route has too few requests per step for the
	// signal's percentile: a right triage steps down to a lower one and
	// says so (docs/triage.md, "Enough calls for the percentile").
	Thin bool `json:"thin,omitempty"`
}

// Fault is one fault as it was applied.
type Fault struct {
	What     string `json:"what"`
	Instance string `json:"instance,omitempty"` // "" for a shared dependency (On)
	// On is the shared dependency the fault was on when it was on no one
	// instance ("": the shared database).
	On   string    `json:"on,omitempty"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Throttled counts the CFS periods the instance's cgroup was throttled
	// in during the fault (the throttling phase only).
	Throttled uint64 `json:"throttled_periods,omitempty"`
}

// VerdictOut is triage's verdict as the lab records it.
type VerdictOut struct {
	Scope    string        `json:"scope"`
	Instance string        `json:"instance,omitempty"`
	DBPath   string        `json:"db_path"`
	Period   time.Duration `json:"period_ns"`
	Cause    string        `json:"cause,omitempty"`
	// Dependency is what slowed ("database", "outbound", "host",
	// "unknown"), Route the outbound dependency's route.
	Dependency string `json:"dependency,omitempty"`
	Route      string `json:"route,omitempty"`
	// Rule names the rules of rule 1 that made the bad steps bad
	// ("threshold", "peer", "held", joined by "+"); Quantile is the
	// signal's percentile triage used (0.95: p95).
	Rule     string  `json:"rule,omitempty"`
	Quantile float64 `json:"quantile,omitempty"`
	Line     string  `json:"line"`
	Next     string  `json:"next,omitempty"`
	// BadSteps are the bad steps per instance (indices from Start).
	BadSteps map[string][]int `json:"bad_steps,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
}

// LoadStats is what the load saw of one instance in a phase's window.
type LoadStats struct {
	Instance string `json:"instance"`
	Requests int    `json:"requests"`
	Errors   int    `json:"errors"`
	// DBP95Ms and NoDBP95Ms are the client-side p95 latencies per route.
	DBP95Ms   float64 `json:"db_p95_ms"`
	NoDBP95Ms float64 `json:"nodb_p95_ms"`
}

// PhaseResult is one phase: its window, the truth, the faults as applied,
// triage's verdict over the window and the checks.
type PhaseResult struct {
	Name   string `json:"name"`
	Signal string `json:"signal"` // triage's signal: "db" (DB-call p95) or "request" (request p99)
	// Route is triage's route filter ("": every route).
	Route   string      `json:"route,omitempty"`
	Summary string      `json:"summary"`
	Start   time.Time   `json:"start"`
	End     time.Time   `json:"end"`
	Truth   Truth       `json:"truth"`
	Faults  []Fault     `json:"faults,omitempty"`
	Verdict *VerdictOut `json:"verdict,omitempty"`
	Error   string      `json:"triage_error,omitempty"`
	Load    []LoadStats `json:"load"`
	// Prom is what Prometheus holds of each instance over the whole phase.
	Prom   map[string]PromEvidence `json:"prometheus,omitempty"`
	Checks []lab.Check             `json:"checks"`
	Took   string                  `json:"triage_took,omitempty"`
	// Prometheus is the lab's Prometheus URL (gone after the run unless
	// Config.Hold kept it).
	Prometheus string `json:"prometheus_url"`
}
