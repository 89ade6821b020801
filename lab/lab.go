// Package lab runs reproducible scenarios that prove latscope's method on
// real parts: a demo service in its own process, a real upstream over HTTP,
// a private PostgreSQL, closed-model load, fault injection. Each scenario
// measures, predicts, and reports predictions next to measurements, with
// checks whose tolerances come from the method.
//
// Scenarios are data: each registers a Scenario from an init function, and
// `latscope-lab --list` shows them.
package lab

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"time"
)

// Env is what a scenario runs with.
type Env struct {
	// Out is this run's output folder (it exists). A scenario writes its
	// files there: traces, profiles, JSON, report sections.
	Out string
	// Log receives progress lines and notes for the person watching.
	Log io.Writer
	// Detail, when set, receives what belongs in the lab log only, not on
	// the terminal: the output of tools such as initdb.
	Detail io.Writer
	// Progress, when set, is told how far the run is (0–1) and the step.
	Progress func(frac float64, step string)
	// Profile sets window lengths and repetitions.
	Profile Profile
	// Command returns a command that runs latscope with args, so a scenario
	// can start the demo service as a separate OS process (to pause,
	// throttle and measure it alone).
	Command func(ctx context.Context, args ...string) *exec.Cmd
	// DBURL is an existing PostgreSQL to use; "" starts a private cluster.
	DBURL string
	// Burners is how many CPU burners ran beside the scenario (Burners,
	// latscope-lab --loaded); 0 on a host left to itself.
	Burners int
}

// Profile is how long a scenario measures.
type Profile struct {
	Name    string
	Warmup  time.Duration // load before the measured window (excluded)
	Window  time.Duration // measured window per run
	Runs    int           // runs per condition; the median is reported
	Clients int           // closed-model clients
}

// Profiles: Default finishes the seed lab in about 80 seconds (3 modes ×
// 25 s of warm-up and window, plus start-up and analysis: 79 s measured);
// Full is the seed's protocol (9 runs × 70 s, about 11 minutes); Short is
// for tests (about 20 seconds).
var (
	Default = Profile{Name: "default", Warmup: 5 * time.Second, Window: 20 * time.Second, Runs: 1, Clients: 20}
	Full    = Profile{Name: "full", Warmup: 10 * time.Second, Window: 60 * time.Second, Runs: 3, Clients: 20}
	Short   = Profile{Name: "short", Warmup: time.Second, Window: 3 * time.Second, Runs: 1, Clients: 20}
)

// Scenario is one lab experiment.
type Scenario struct {
	Name    string
	Summary string
	// Needs lists what the scenario requires ("postgres": server binaries
	// or --db-url; "private-postgres": server binaries, no --db-url; "root");
	// the lab checks before running and says what is missing.
	Needs []string
	// Check, when set, says what else the scenario lacks on this machine
	// (a JDK, a driver), before the lab creates anything.
	Check func() error
	Run   func(ctx context.Context, env *Env) (*Outcome, error)
}

// Outcome is what a scenario found.
type Outcome struct {
	Title    string
	Markdown string // the report section (Markdown tables and findings)
	HTML     []byte // a self-contained HTML report, written as report.html; nil for none
	JSON     any    // written as <name>.json
	Checks   []Check
}

// Check is one acceptance check: what the method expects and what was
// measured. A check of an estimate (a mean, a ratio, an error, a gain)
// carries its 95 % interval and a three-way verdict (Estimated, verdict.go);
// a structural check (which frame is first, a count, an invariant) is
// exact (Exact): pass or fail.
type Check struct {
	Name string
	Want string
	Got  string
	// OK means "not failed": true for a pass and for an inconclusive
	// verdict, false for a fail. Only a failed check makes the lab exit
	// with status 1.
	OK bool
	// Verdict is pass, fail or inconclusive (Verdict() derives it from OK
	// for a check that does not set it).
	Verdict string `json:",omitempty"`
	// Low and High are the 95 % interval of the estimate (null for an
	// exact check, and for an estimate with too few values for one:
	// inconclusive); Method says how its standard error was estimated.
	Low    *float64 `json:",omitempty"`
	High   *float64 `json:",omitempty"`
	Method string   `json:",omitempty"`
}

// Failed returns the checks that failed (the others passed or are
// inconclusive).
func (o *Outcome) Failed() []Check {
	var out []Check
	for _, c := range o.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

var registry = map[string]Scenario{}

// Register adds a scenario; it panics on a duplicate name (a programming error).
func Register(s Scenario) {
	if _, dup := registry[s.Name]; dup {
		panic(fmt.Sprintf("lab: scenario %q registered twice", s.Name))
	}
	registry[s.Name] = s
}

// Lookup returns the named scenario.
func Lookup(name string) (Scenario, bool) {
	s, ok := registry[name]
	return s, ok
}

// Scenarios returns all scenarios by name.
func Scenarios() []Scenario {
	out := make([]Scenario, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Logf writes a progress line.
func (e *Env) Logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format+"\n", args...)
	}
}

// Step reports progress.
func (e *Env) Step(frac float64, step string) {
	if e.Progress != nil {
		e.Progress(frac, step)
	}
}

// LoadAverage returns the machine's 1-minute load average (0 if unknown):
// checks that compare timings say when the machine was busy.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var la float64
	fmt.Sscanf(string(b), "%f", &la)
	return la
}
