package jvm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/tracein"
)

// Options configure an analysis.
type Options struct {
	// Handler names the frame that marks request time: a wait or sample
	// counts only if its stack contains it. "DemoController.handle" matches
	// a frame that is it or ends in "." or "$" followed by it.
	Handler string
	// Requests is the number of requests in the recording. JFR has no
	// request boundaries, so the caller must know it; Load replaces it.
	Requests int
	// Load, when set, holds the requests counted from load results
	// (CountRequests), with their latencies.
	Load       *Requests
	Rules      jfr.Rules
	StackDepth int    // --stack-depth for jfr print
	Tool       string // the jfr command; "" finds it (jfr.FindTool)
	// Predictions are what-if changes simulated over each request's
	// timelines; only a recording with latscope.Request events has them.
	Predictions []budget.Prediction
}

// DefaultOptions are the defaults. A recording with latscope.Request
// events (the Java library, java/) needs nothing more; without them, set
// Handler and Requests or Load.
var DefaultOptions = Options{Rules: jfr.DefaultRules, StackDepth: jfr.DefaultStackDepth}

// ErrNoCount is returned when neither a request count nor load results are
// given.
var ErrNoCount = opterr.Wrap("requests", errors.New("not given: the recording has no latscope.Request events (the Java library in java/, docs/jfr.md, adds them), so it has no request boundaries: give the request count, or the load results that drove it; latscope never divides JVM-wide totals by a guessed count"))

// ErrNoHandler is returned when Options.Handler is empty.
var ErrNoHandler = opterr.Wrap("handler", errors.New("not given: the recording has no latscope.Request events (the Java library in java/, docs/jfr.md, adds them): name the frame that handles a request (e.g. DemoController.handle); only waits beneath it are request time"))

// Analyze reads the events of the recording at path (whose headers are rec)
// through jfr.ReadEvents and returns its budget.
func Analyze(ctx context.Context, path string, rec *jfr.Recording, o Options) (*budget.Result, error) {
	a, err := Read(ctx, path, rec, o)
	if err != nil {
		return nil, err
	}
	return a.Finalize(), nil
}

// Read reads the events of the recording at path (whose headers are rec)
// once, through jfr.ReadEvents, into a new Analyzer and into each of also,
// first: another analysis of the same events (package sched's JVM churn),
// so that one read serves both. It returns the Analyzer, not finalized, or
// the read's error, or Matched's (naming path).
func Read(ctx context.Context, path string, rec *jfr.Recording, o Options, also ...func(*jfr.Event)) (*Analyzer, error) {
	a, err := New(o, rec)
	if err != nil {
		return nil, err
	}
	err = jfr.ReadEvents(ctx, path, jfr.PrintOptions{Tool: o.Tool, StackDepth: a.opts.StackDepth, Events: jfr.Events}, func(ev *jfr.Event) error {
		for _, f := range also {
			f(ev)
		}
		a.Event(ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := a.Matched(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// Analyzer builds a budget from a recording's events, one at a time.
type Analyzer struct {
	opts  Options
	rec   *jfr.Recording
	count int

	terms []budget.Term
	index map[termKey]int
	waits []termStat
	// outside is wait time of events without the handler frame, by kind.
	outside  [frame.NumKinds]int64
	regions  regionTable
	rstats   map[int32]*budget.RegionStat
	samples  int // all execution samples
	hSamples int // execution samples under the handler
	matched  int // events under the handler
	threads  map[int64]bool
	handlers map[string]bool // frames that matched Handler
	seen     map[string]bool // application frames, for suggestions
	cut      struct {
		events int
		wait   int64
	}
	records int64
	env     environment
	req     *reqData
	// RequestCPU is set by Finalize in request mode: the CPU time of the
	// requests' threads while they worked for a request, from execution
	// samples; negative when unknown.
	RequestCPU float64
	// RequestCPUExact is set when RequestCPU is the library's measured
	// thread CPU (ThreadMXBean) rather than execution samples.
	RequestCPUExact bool
	// HeldCPU is, with RequestCPUExact, the requests' CPU inside holds
	// (latscope.Hold) by route: not in RequestCPU or a group's running
	// time, but in the holds' terms. A CPU station's demand adds it back.
	HeldCPU map[string]time.Duration
	// HandOffs are the contended hand-offs of each hold (latscope.Hold) by
	// its acquiring frame: time a lock or pooled resource stayed free
	// while its next holder was being woken.
	HandOffs map[string]HandOff
}

type termStat struct {
	wait   int64
	events int
}

// maxSuggest bounds the application frames kept for suggestions.
const maxSuggest = 5000

// New returns an analyzer for the recording rec.
func New(o Options, rec *jfr.Recording) (*Analyzer, error) {
	count := o.Requests
	if o.Load != nil {
		count = o.Load.Count
	}
	if count < 0 {
		return nil, opterr.Wrap("requests", fmt.Errorf("%d: want a positive count", count))
	}
	if rec == nil || len(rec.Chunks) == 0 {
		return nil, errors.New("no recording headers")
	}
	if o.StackDepth <= 0 {
		o.StackDepth = jfr.DefaultStackDepth
	}
	a := &Analyzer{opts: o, rec: rec, count: count, index: map[termKey]int{}, regions: newRegionTable(), rstats: map[int32]*budget.RegionStat{},
		threads: map[int64]bool{}, handlers: map[string]bool{}, seen: map[string]bool{}, env: newEnvironment(), req: newReqData(), RequestCPU: -1}
	return a, nil
}

// Event adds one event. ev is not kept.
func (a *Analyzer) Event(ev *jfr.Event) {
	a.records++
	switch ev.Type {
	case "jdk.ActiveSetting", "jdk.JVMInformation", "jdk.CPUInformation", "jdk.CPULoad", "jdk.CompilerStatistics":
		a.env.event(ev, a.rec)
		return
	}
	a.req.event(ev, &a.opts.Rules)
	if a.opts.Handler == "" {
		if ev.Type == "jdk.ExecutionSample" {
			a.samples++
		}
		a.thread(ev.Thread)
		return
	}
	switch ev.Type {
	case "jdk.ExecutionSample":
		a.sample(ev)
		return
	}
	kind, ok := jfr.WaitKind(ev.Type)
	if !ok {
		return
	}
	a.thread(ev.Thread)
	h := a.handler(ev.Stack)
	if h < 0 {
		a.outside[kind] += int64(ev.Duration)
		a.suggest(ev.Stack)
		if ev.Truncated || len(ev.Stack) >= a.opts.StackDepth { // cut by the JVM, or by jfr print
			a.cut.events++
			a.cut.wait += int64(ev.Duration)
		}
		return
	}
	a.matched++
	attr := a.opts.Rules.Decide(ev.Stack[:h+1])
	app, mech, kind := attr.Term(ev.Type, ev.MonitorClass)
	path := a.appPath(ev.Stack[:h+1], attr.AppIndex, app)
	k := termKey{path: strings.Join(path, "\n"), mech: mech, kind: kind}
	i, ok := a.index[k]
	if !ok {
		i = len(a.terms)
		a.index[k] = i
		a.terms = append(a.terms, budget.Term{Frame: app, Path: path, Mechanism: mech, Kind: kind})
		a.waits = append(a.waits, termStat{})
	}
	a.waits[i].wait += int64(ev.Duration)
	a.waits[i].events++
	a.region(path).Wall += int64(ev.Duration)
}

func (a *Analyzer) sample(ev *jfr.Event) {
	a.samples++
	a.thread(ev.Thread)
	h := a.handler(ev.Stack)
	if h < 0 {
		return
	}
	a.hSamples++
	attr := a.opts.Rules.Decide(ev.Stack[:h+1])
	a.region(a.appPath(ev.Stack[:h+1], attr.AppIndex, attr.App)).CPUSamples++
}

func (a *Analyzer) thread(t jfr.Thread) {
	id := t.JavaID
	if id == 0 {
		id = -t.OSID
	}
	a.threads[id] = true
}

// handler returns the index of the outermost frame matching the handler,
// or -1.
func (a *Analyzer) handler(stack []jfr.Frame) int {
	for i := len(stack) - 1; i >= 0; i-- {
		if MatchFrame(stack[i].Method, a.opts.Handler) {
			a.handlers[stack[i].Method] = true
			return i
		}
	}
	return -1
}

// MatchFrame reports whether method is the frame name names: equal, or
// ending in "." or "$" followed by name.
func MatchFrame(method, name string) bool {
	if !strings.HasSuffix(method, name) {
		return false
	}
	rest := method[:len(method)-len(name)]
	return rest == "" || strings.HasSuffix(rest, ".") || strings.HasSuffix(rest, "$")
}

// region returns the stats of the region of an application call path
// (named in group).
func (a *Analyzer) region(path []string) *budget.RegionStat {
	id := a.regions.id(path)
	r, ok := a.rstats[id]
	if !ok {
		r = &budget.RegionStat{}
		a.rstats[id] = r
	}
	return r
}

func (a *Analyzer) suggest(stack []jfr.Frame) {
	if a.matched > 0 || len(a.seen) >= maxSuggest {
		return
	}
	for _, f := range stack {
		if a.opts.Rules.IsApp(f.Method) {
			a.seen[f.Method] = true
		}
	}
}

// Matched returns an error when the recording has no latscope.Request
// events and the handler mode cannot run: no handler or count given, or no
// wait or sample had the handler frame.
func (a *Analyzer) Matched() error {
	if a.Requests() {
		return nil
	}
	if strings.TrimSpace(a.opts.Handler) == "" {
		return ErrNoHandler
	}
	if a.count <= 0 {
		return ErrNoCount
	}
	if a.matched > 0 || a.hSamples > 0 {
		return nil
	}
	names := make([]string, 0, len(a.seen))
	for n := range a.seen {
		names = append(names, n)
	}
	sort.Strings(names)
	hint := ""
	if c := budget.Closest(a.opts.Handler, names, 3); len(c) > 0 {
		hint = "; closest application frames: " + strings.Join(c, ", ")
	}
	return opterr.Wrap("handler", fmt.Errorf("%q: no wait or sample among %d events has this frame on its stack%s", a.opts.Handler, a.records, hint))
}

// Requests reports whether the recording has latscope.Request events: the
// analysis is then per request (request mode), else beneath the handler.
func (a *Analyzer) Requests() bool { return len(a.req.requests) > 0 }

// Finalize returns the result. The Analyzer must not be used afterwards.
func (a *Analyzer) Finalize() *budget.Result {
	if a.Requests() {
		return a.finalizeRequests()
	}
	g := a.group()
	res := &budget.Result{Info: a.info(), Terms: a.terms, Stacks: tracein.NewStacks(), Groups: []*budget.Group{g}}
	res.Outside.ByKind = a.outside
	res.Warnings = a.findings(g)
	return res
}

func (a *Analyzer) group() *budget.Group {
	g := &budget.Group{Name: a.groupName(), Count: a.count, CPUSamples: a.hSamples}
	if l := a.opts.Load; l != nil {
		g.ExcludedBefore, g.ExcludedAfter = l.Before, l.After
		g.Latencies = l.Latencies
		g.Latency = budget.StatsOf(l.Latencies)
	}
	for i, w := range a.waits {
		ts := budget.TermStat{Term: critpath.TermID(i), Wait: w.wait, Critical: w.wait, Fix: w.wait, Requests: min(w.events, a.count)}
		ts.Causes[a.terms[i].Kind] = w.wait
		g.Terms = append(g.Terms, ts)
	}
	sort.SliceStable(g.Terms, func(i, j int) bool {
		x, y := g.Terms[i], g.Terms[j]
		if x.Critical != y.Critical {
			return x.Critical > y.Critical
		}
		return a.terms[x.Term].Name() < a.terms[y.Term].Name()
	})
	names := a.regions.names()
	for id, r := range a.rstats {
		r.Name = names[id]
		g.Regions = append(g.Regions, *r)
	}
	sortRegions(g.Regions)
	return g
}

// groupName is the handler frame as the recording spells it, when one
// frame matched, else the --handler text.
// termKey identifies a term: its call path, mechanism and kind.
type termKey struct {
	path, mech string
	kind       frame.Kind
}

// appPath returns the application call path of a wait: the application
// frames from the handler (stack's last frame) down to the application
// frame at appIndex, outermost first, direct recursion folded. A term whose
// frame is not an application frame (a pool, say) has the path [app].
func (a *Analyzer) appPath(stack []jfr.Frame, appIndex int, app string) []string {
	if app == "" {
		return nil
	}
	if appIndex < 0 || stack[appIndex].Method != app {
		return []string{app}
	}
	var path []string
	for i := len(stack) - 1; i >= appIndex; i-- {
		m := stack[i].Method
		if a.opts.Rules.IsApp(m) && (len(path) == 0 || path[len(path)-1] != m) {
			path = append(path, m)
		}
	}
	return path
}

func (a *Analyzer) groupName() string {
	if len(a.handlers) == 1 {
		for n := range a.handlers {
			return n
		}
	}
	return a.opts.Handler
}

func (a *Analyzer) info() budget.TraceInfo {
	start, end := a.rec.Start(), a.rec.End()
	// the JVM's CPU over the recording: its share in the jdk.CPULoad
	// samples' intervals, over the whole window
	var busy int64
	if e := a.env; e.loadTime > 0 {
		busy = int64(e.jvmBusy / e.loadTime * float64(end.Sub(start)) * float64(e.hwThreads))
	}
	return budget.TraceInfo{
		Start: tracein.Time(start.UnixNano()), End: tracein.Time(end.UnixNano()), StartWall: start,
		Records: a.records, Generations: len(a.rec.Chunks), Goroutines: len(a.threads),
		CPUSamples: a.samples, Procs: a.env.hwThreads, ProcBusy: busy,
		JVM: true,
	}
}

// environment is what the recording says about its settings and machine.
type environment struct {
	settings  jfr.Settings
	jvmStart  time.Time
	hwThreads int
	lastLoad  time.Time
	// Σ over jdk.CPULoad samples of share × interval (ns): the JVM's and
	// the whole machine's CPU, as shares of all hardware threads.
	jvmBusy, machBusy float64
	loadTime          float64 // Σ interval (ns)
	// the JIT compiler's totals at the first and the last
	// jdk.CompilerStatistics sample (at zero: none)
	compFirst, compLast compilerAt
}

// compilerAt is a jdk.CompilerStatistics sample: the totals at a time.
type compilerAt struct {
	at time.Time
	jfr.Compiler
}

func newEnvironment() environment {
	return environment{settings: jfr.NewSettings()}
}

func (e *environment) event(ev *jfr.Event, rec *jfr.Recording) {
	switch ev.Type {
	case "jdk.ActiveSetting":
		e.settings.Add(ev, rec)
	case "jdk.JVMInformation":
		if !ev.JVMStart.IsZero() && (e.jvmStart.IsZero() || ev.JVMStart.Before(e.jvmStart)) {
			e.jvmStart = ev.JVMStart
		}
	case "jdk.CPUInformation":
		e.hwThreads = max(e.hwThreads, ev.HWThreads)
	case "jdk.CompilerStatistics":
		s := compilerAt{ev.Start, ev.Compiler}
		if e.compFirst.at.IsZero() || s.at.Before(e.compFirst.at) {
			e.compFirst = s
		}
		if s.at.After(e.compLast.at) {
			e.compLast = s
		}
	case "jdk.CPULoad":
		from := e.lastLoad
		if from.IsZero() {
			from = rec.Start()
		}
		// the recording's first sample has no earlier one to measure from:
		// the JVM writes it as all zeros, a measurement of nothing
		blank := ev.Load.JVMUser == 0 && ev.Load.JVMSystem == 0 && ev.Load.MachineTotal == 0
		if d := float64(ev.Start.Sub(from)); d > 0 && !blank {
			e.jvmBusy += (ev.Load.JVMUser + ev.Load.JVMSystem) * d
			e.machBusy += ev.Load.MachineTotal * d
			e.loadTime += d
		}
		e.lastLoad = ev.Start
	}
}
