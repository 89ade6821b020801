package budget

import (
	"slices"
	"sort"
	"time"

	"github.com/latscope/latscope/internal/quantile"

	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// Result is the outcome of one analysis. All durations are nanoseconds;
// sums are over a group's counted requests (divide by Count for means).
type Result struct {
	Info     TraceInfo
	Terms    []Term          // the term table; TermStat.Term indexes it
	Stacks   *tracein.Stacks // the stack table that StackStat.Stack and CPUStacks index
	Groups   []*Group        // request types, most requests first
	Outside  Outside
	Warnings []error // findings and refusals; see Finding
	// rules are the rules the terms were attributed by, for Cause.
	rules frame.Rules
}

// TraceInfo describes the trace as a whole.
type TraceInfo struct {
	Start, End  tracein.Time
	StartWall   time.Time // zero when the trace has no clock snapshot
	Records     int64
	Generations int
	Goroutines  int
	Tasks       int // TaskBegin events
	NestedTasks int // tasks begun inside another open task (counted with their parent)
	// ExcludedUntyped counts tasks that ended in the trace but began before
	// it, whose type the trace does not record.
	ExcludedUntyped int
	CPUSamples      int
	// CPUFrameSamples counts the CPU samples that fell in a goroutine's
	// running time: those that split running time by frame (cpu.go).
	CPUFrameSamples int
	Procs           int   // Ps seen (GOMAXPROCS as the trace shows it)
	ProcBusy        int64 // Σ time Ps were running
	// SyscallHeld is the part of ProcBusy a goroutine in a system call
	// held its P: its thread off the CPU by its own doing, the P handed on
	// once other goroutines want it (procSyscalls).
	SyscallHeld int64
	// SampledBusy is Σ time Ps were running from the first CPU sample to
	// the last, less the time a goroutine in a system call held them;
	// ProcSamples counts the samples after the first that a thread holding
	// a P took outside a system call, SampleThreads the threads they came
	// from (ProcCPUShare).
	SampledBusy                int64
	ProcSamples, SampleThreads int
	// SampleGaps counts the stretches left out of SampledBusy where the
	// samples stopped while the Ps ran on: a profiler stopped and started
	// again (ProfileGap).
	SampleGaps int
	Inferred   bool // requests were inferred from net/http or grpc-go server goroutines
	JVM        bool // a JVM recording (package jfr), not a Go trace
	// OtherCPU is the share of the machine's hardware threads (0–1) that
	// its other processes used over a JVM recording (jdk.CPULoad's
	// machineTotal less the JVM's; pipeline.JFRDemands); 0 when unknown.
	OtherCPU float64
	// Module is the main module whose code was taken as the application
	// (frame.Rules.Module: from the agent's log in the trace, or given);
	// "" when the default rules chose.
	Module string
	// ModuleFromMain says Module is the module cache's module holding
	// package main's source, found in the trace (frame.Rules.ModuleFromMain).
	ModuleFromMain bool
	// CPULog is the process CPU counter the agent logged into the trace.
	CPULog CPULog
	// OrphanTasks counts tasks excluded as pieces of requests the trace
	// cut: their parent task began before the trace (OpenTelemetry's SDK
	// begins a task per span, a child span's inside its parent's), or is
	// itself such a piece.
	OrphanTasks int
	// CallTasks counts tasks excluded as outbound calls' outside any
	// request: agentotel marks them (tracelog.Call).
	CallTasks int
	// ExcludedUnrouted counts requests still open at the trace's end under
	// a task name that a latscope.route log renamed in other requests:
	// their route, logged at their end, is not in the trace.
	ExcludedUnrouted int
	// TracedRequests counts the requests that ended in the trace with a
	// trace ID (a latscope.request log in their own task), before
	// Options.TraceID chose among them; BadRequestLogs the
	// latscope.request logs that held no valid traceparent.
	TracedRequests, BadRequestLogs int
}

// Duration returns the trace's length in nanoseconds.
func (t TraceInfo) Duration() int64 { return int64(t.End - t.Start) }

// Outside is goroutine time spent outside any request, by kind. It is never
// divided by a request count (docs/method.md §6, pitfall "process-wide totals divided by requests").
type Outside struct {
	ByKind [frame.NumKinds]int64
}

// Group is the analysis of one request type.
type Group struct {
	Name     string
	Inferred bool
	Count    int // requests that began and ended in the trace
	// ExcludedBefore ended in the trace but began before it; ExcludedAfter
	// began but had not ended when the trace stopped.
	ExcludedBefore, ExcludedAfter int
	Latency                       Stats
	Terms                         []TermStat // waits, most critical first
	// CPUTerms split Running by application frame (docs/method.md §3, "CPU
	// by frame"), most critical first: TermStat.Wait is the goroutine time
	// running beneath the term's call path, Critical that time on the
	// critical path. Running holds all of it and the rest.
	CPUTerms          []TermStat
	Running, Runnable TimeStat
	// RunningExact, in a JVM recording, says Running is the Java library's
	// measured thread CPU of every request (cpuTime), outside the holds'
	// terms; without it a recording's running time is not measured.
	RunningExact bool
	// CPUByFrame says how much of Running has a frame, and how it was found.
	CPUByFrame CPUByFrame
	Unknown    int64 // critical-path time the timelines could not explain
	Forked     int   // requests that ran on more than one goroutine
	// PathMismatch counts requests whose critical path did not sum to their
	// latency. It is zero unless the analyser has a bug; tests assert it.
	PathMismatch int
	Regions      []RegionStat
	CPUSamples   int
	// StackWaits is off-CPU time by blocking stack and kind (for flame
	// graphs); CPUStacks counts in-request CPU samples by stack.
	StackWaits      []StackStat
	CPUStacks       map[tracein.StackID]int
	Predictions     []PredictionResult
	Slowest, Median *Path
	// Latencies are the requests' latencies in the order they ended.
	Latencies []int64
	// Transport is the time outside the requests that grpc-go's transport
	// goroutines show (before: the connection's read → the request; after:
	// the request → the response's write); nil when none did.
	Transport *TransportEstimate
	// ServerQueue is the time outside the requests in the server's queue
	// and the server's workers (a JVM recording with the Java library's
	// io.latscope.ServerQueue); nil when the input has none.
	ServerQueue *ServerQueue
	// RunnableBefore is the time the requests waited for a CPU before they
	// began (a Go trace's task requests); nil when none did.
	RunnableBefore *RunnableBefore
	// SlowTraces are the SlowTraces slowest requests with a trace ID,
	// slowest first; Traced counts the group's requests with one.
	SlowTraces []TracedRequest
	Traced     int
}

// Group returns the group named name, or nil (also for a nil r).
func (r *Result) Group(name string) *Group {
	if r == nil {
		return nil
	}
	for _, g := range r.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// Excluded returns the number of requests cut by the trace window.
func (g *Group) Excluded() int { return g.ExcludedBefore + g.ExcludedAfter }

// Stats summarise latencies (ns). Percentiles are exact (nearest rank).
type Stats struct {
	Mean                    float64
	Min, P50, P90, P99, Max int64
}

// TermStat is one term's time in a group.
type TermStat struct {
	Term     critpath.TermID
	Wait     int64 // goroutine time (wait sum)
	Critical int64 // time on the critical path
	Fix      int64 // latency saved if the term were gone (Σ over requests)
	// Along, for a CPU term: the time on the critical path that went
	// along with its CPU (critpath.Seg.Along): plain running time (Go
	// counted the goroutine as running while no CPU sample saw the
	// thread) and the runnable time of the frame's preemptions, Σ over
	// requests; it is part of Fix, not of Critical. AlongRunnable is its
	// runnable part: queueing, not CPU demand.
	Along         int64
	AlongRunnable int64
	Contention    int64 // critical time ended by another request (lock or pool held elsewhere)
	// CPU is the thread CPU measured inside the term, Σ over requests: a
	// JVM hold's (the Java library's latscope.Hold cpuTime); 0 where the
	// input does not measure it.
	CPU      int64
	Requests int // requests with this wait
	// Causes splits Critical by what was really happening: the wait itself,
	// or for waits explained by a goroutine outside the request (a transport's
	// readLoop), that goroutine's state (network, running, …).
	Causes [frame.NumKinds]int64
	// Roots name the causes of the borrowed part of Critical: what the
	// goroutine at the end of a chain of hand-offs was blocked in (its
	// application frame, mechanism and kind), largest first. Only causes
	// with an application frame are kept (a transport's read is named by
	// Causes alone).
	Roots []RootCause
}

// RootCause is the root cause of a wait explained by goroutines outside the
// request (docs/method.md §4): the blocking stack of the goroutine at the
// end of the chain — a raft loop's fdatasync beneath an apply queue.
type RootCause struct {
	Frame     string   // innermost application frame of the cause's stack
	Path      []string // its application call path, outermost first
	Mechanism string
	Kind      frame.Kind
	Critical  int64 // Σ over the group's requests
	// Hops is how many goroutines lie between the request's wait and the
	// cause's (0: the goroutine that ended the wait was itself blocked in it).
	Hops int
}

// Name returns "frame [mechanism, kind]", the frame without its package's
// directories.
func (rc RootCause) Name() string {
	return Term{Frame: rc.Frame, Mechanism: rc.Mechanism, Kind: rc.Kind}.Name()
}

// CPUByFrame is how a group's running time was split by frame (Σ over its
// requests, ns).
type CPUByFrame struct {
	// FromSamples and FromStacks are goroutine running time given a frame
	// by the CPU samples of its context, and by the stacks at its two ends
	// (an estimate); the rest of Running.Wait has no frame.
	FromSamples, FromStacks int64
	// Critical is the part of Running.Critical that has a frame.
	Critical int64
}

// StackStat is off-CPU time under one blocking stack.
type StackStat struct {
	Stack          tracein.StackID
	Kind           frame.Kind
	Wait, Critical int64
}

// TimeStat is running or runnable time.
type TimeStat struct{ Wait, Critical int64 }

// RegionStat is goroutine time and CPU samples inside a runtime/trace region
// ("" for time outside any region).
type RegionStat struct {
	Name       string
	Wall       int64
	CPUSamples int
}

// PredictionResult is a prediction evaluated over a group's requests.
type PredictionResult struct {
	Prediction
	Mean    float64
	P99     int64
	Matched bool // some term of the trace matched the prediction's names
	// Latencies are the simulated latencies of the group's requests, one
	// per request in the order of Group.Latencies (the order they ended),
	// so that an interval for Mean can be taken over the series (the Go
	// analyser and the JFR reader's request mode both keep it).
	Latencies []int64
}

// Path is one request's critical path, in time order.
type Path struct {
	Task       tracein.TaskID
	TraceID    TraceID // zero when the request has none
	Begin, End tracein.Time
	Latency    int64
	Goroutines int
	Segs       []critpath.PathSeg
}

// Finalize ends the analysis and returns its result. The Analyzer must not
// be used afterwards.
func (a *Analyzer) Finalize() *Result {
	for _, r := range a.open {
		switch {
		case r.call:
			a.info.CallTasks++
		case a.opts.TraceID != "" && !a.keep(r):
		case a.renamedFrom[r.name]:
			// Named as others were before their route log (which comes at
			// a request's end): its route is not in the trace.
			a.info.ExcludedUnrouted++
		default:
			a.group(nameOr(r.name, "(unnamed)"), false).excludedAfter++
		}
	}
	a.settleAll()
	a.inferFinalize()
	a.info.CPUFrameSamples = a.cpu.samples
	res := &Result{Info: a.info, Terms: slices.Clone(a.terms.list), Stacks: a.terms.stacks}
	res.rules = a.opts.Rules
	res.Info.ProcBusy, res.Info.SyscallHeld = a.busyNow(a.info.End), a.share.syscalls.heldNow(a.info.End)
	res.Info.SampledBusy, res.Info.ProcSamples, res.Info.SampleThreads = a.share.busyLast-a.share.busyFirst-a.share.gapBusy, a.share.samples, len(a.share.threads)
	res.Info.SampleGaps = a.share.gaps
	res.Info.Module, res.Info.ModuleFromMain = a.opts.Rules.Module, a.opts.Rules.ModuleFromMain
	res.Outside.ByKind = a.outside
	for _, gs := range a.groups {
		if a.seenTask && gs.inferred {
			continue
		}
		res.Groups = append(res.Groups, a.finalGroup(gs))
	}
	sort.Slice(res.Groups, func(i, j int) bool {
		gi, gj := res.Groups[i], res.Groups[j]
		if gi.Count != gj.Count {
			return gi.Count > gj.Count
		}
		return gi.Name < gj.Name
	})
	res.Info.Inferred = !a.seenTask && len(res.Groups) > 0
	res.Warnings = append(a.warnings, findings(res, a)...)
	return res
}

// Cause names what a goroutine blocked on stack st (a path piece's Cause)
// was blocked in, when the stack has an application frame.
func (r *Result) Cause(st tracein.StackID, k frame.Kind) (RootCause, bool) {
	if st == tracein.NoStack || r.Stacks == nil || int(st) >= r.Stacks.Len() {
		return RootCause{}, false
	}
	var funcs, files []string
	for _, f := range r.Stacks.Frames(st) {
		funcs, files = append(funcs, f.Func), append(files, f.File)
	}
	at := r.rules.DecideFiles(funcs, files)
	if at.App == "" {
		return RootCause{}, false
	}
	return RootCause{Frame: at.App, Mechanism: at.Mechanism, Kind: k}, true
}

// roots merges a term's root causes by frame, mechanism and kind.
func (a *Analyzer) roots(t *termAcc) []RootCause {
	var out []RootCause
	for k, ra := range t.roots {
		si := a.terms.stack(k.stack)
		if si.attr.App == "" {
			continue
		}
		i := slices.IndexFunc(out, func(rc RootCause) bool {
			return rc.Frame == si.attr.App && rc.Mechanism == si.attr.Mechanism && rc.Kind == k.kind && slices.Equal(rc.Path, si.path)
		})
		if i < 0 {
			out = append(out, RootCause{Frame: si.attr.App, Path: si.path, Mechanism: si.attr.Mechanism, Kind: k.kind})
			i = len(out) - 1
		}
		out[i].Critical += ra.crit
		out[i].Hops = max(out[i].Hops, int(ra.hops))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Critical != out[j].Critical {
			return out[i].Critical > out[j].Critical
		}
		if ni, nj := out[i].Name(), out[j].Name(); ni != nj {
			return ni < nj
		}
		return slices.Compare(out[i].Path, out[j].Path) < 0 // one name by two paths: in a fixed order, not the map's
	})
	return out
}

func (a *Analyzer) finalGroup(gs *groupState) *Group {
	g := &Group{
		Name: gs.name, Inferred: gs.inferred,
		ExcludedBefore: gs.excludedBefore, ExcludedAfter: gs.excludedAfter, CPUSamples: gs.samples,
		Running: TimeStat{gs.running, gs.critRunning}, Runnable: TimeStat{gs.runnable, gs.critRunnable},
		Slowest:   gs.slowest,
		Transport: gs.transport(), RunnableBefore: gs.runnableBefore(),
		SlowTraces: gs.slowTraces, Traced: gs.traced,
		CPUByFrame: CPUByFrame{FromSamples: gs.cpuFrom[critpath.CPUSamples], FromStacks: gs.cpuFrom[critpath.CPUStacks], Critical: gs.critCPU},
	}
	gs.Fill(g, a.opts.Predictions, a.terms.list)
	gs.Each(func(ts TermStat) {
		ts.Roots = a.roots(gs.terms[ts.Term])
		if a.terms.list[ts.Term].IsCPU() {
			g.CPUTerms = append(g.CPUTerms, ts)
		} else {
			g.Terms = append(g.Terms, ts)
		}
	})
	for _, ts := range [][]TermStat{g.Terms, g.CPUTerms} {
		sort.SliceStable(ts, func(i, j int) bool {
			if ts[i].Critical != ts[j].Critical {
				return ts[i].Critical > ts[j].Critical
			}
			if ts[i].Wait != ts[j].Wait {
				return ts[i].Wait > ts[j].Wait
			}
			return ts[i].Term < ts[j].Term
		})
	}
	for id, r := range gs.regions {
		if r.wall > 0 || r.cpu > 0 {
			g.Regions = append(g.Regions, RegionStat{Name: a.regionNames[id], Wall: r.wall, CPUSamples: r.cpu})
		}
	}
	sort.SliceStable(g.Regions, func(i, j int) bool { return g.Regions[i].Wall > g.Regions[j].Wall })
	g.Median = medianPath(gs.reservoir, g.Latency.P50)
	for st, kinds := range gs.stacks {
		if kinds == nil {
			continue
		}
		for k, s := range kinds {
			if s.wait != 0 || s.crit != 0 {
				g.StackWaits = append(g.StackWaits, StackStat{Stack: tracein.StackID(st), Kind: frame.Kind(k), Wait: s.wait, Critical: s.crit})
			}
		}
	}
	sort.Slice(g.StackWaits, func(i, j int) bool {
		a, b := g.StackWaits[i], g.StackWaits[j]
		if a.Wait != b.Wait {
			return a.Wait > b.Wait
		}
		return a.Stack < b.Stack || a.Stack == b.Stack && a.Kind < b.Kind
	})
	g.CPUStacks = gs.cpuStacks
	return g
}

// medianPath returns the kept path whose latency is closest to the median.
func medianPath(paths []*keptPath, p50 int64) *Path {
	var best *keptPath
	for _, k := range paths {
		if best == nil || abs(k.meta.Latency-p50) < abs(best.meta.Latency-p50) {
			best = k
		}
	}
	if best == nil {
		return nil
	}
	return best.path()
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// stats computes exact statistics of xs (nanoseconds).
func stats(xs []int64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	return Stats{Mean: sum / float64(len(s)), Min: s[0], P50: quantile.Sorted(s, 0.50), P90: quantile.Sorted(s, 0.90), P99: quantile.Sorted(s, 0.99), Max: s[len(s)-1]}
}

// Stats returns exact statistics of latencies in nanoseconds.
func StatsOf(xs []int64) Stats { return stats(xs) }
