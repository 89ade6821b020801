package htmlreport

import (
	"fmt"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/render"
)

// words are the terms of the input's platform: a Go trace's goroutines, or
// a JVM recording's threads, whose running and runnable time JFR does not
// record.
type words struct {
	unit        string // "goroutine" or "thread"
	critical    string // the solid bar's series
	budgetIntro string
	regionIntro string
	noSamples   string
	pathIntro   string
}

var goWords = words{
	unit:     "goroutine",
	critical: "on the critical path",
	budgetIntro: "Each term is an application frame, the mechanism beneath it and the kind of wait, or the frame's CPU (kind running: from the CPU samples the trace carries, or, marked somewhere beneath, estimated from the stacks where goroutines resumed and stopped). The pale bar is goroutine time (every goroutine of the request, so parallel waits count more than once); " +
		"the solid bar is the time the term spent on the critical path, which tiles the latency exactly.",
	regionIntro: "A CPU profile ranks code by samples taken while it runs; the wall clock also counts the time it waits. Regions (runtime/trace.WithRegion) where the two disagree are where a CPU profile misleads.",
	noSamples:   "The trace carries no CPU samples: run the CPU profiler while tracing (the trace then records its samples) to see what a CPU profile would show.",
	pathIntro: "The chain of work each request waited on, walked backwards over wake-up edges from its end; its pieces tile the latency. One row per goroutine; hatched pieces ran on a goroutine outside the request " +
		"(such as an HTTP transport's read loop) and are coloured by what it was doing; dashed outlines were held by another request.",
}

var jvmWords = words{
	unit:     "thread",
	critical: "on the critical path (taken to be the handler thread's waits)",
	budgetIntro: "Each term is an application frame, the mechanism beneath it and the kind of wait, from the JFR wait events beneath the handler. The pale bar is thread time; " +
		"JFR records waits per thread without wake-up edges, so the solid bar, the critical path, is taken to be the handler thread's waits. " +
		"Running and runnable time are not measured: JFR records waits and execution samples, not a thread's time on and off the CPU.",
	regionIntro: "A CPU profile ranks code by samples taken while it runs; the wall clock also counts the time it waits. Application frames where JFR's execution samples and its wait events disagree are where a CPU profile misleads.",
	noSamples:   "The recording carries no execution samples beneath the handler: enable jdk.ExecutionSample (settings=profile samples every 10 ms).",
	pathIntro: "The chain of work each request waited on, walked backwards from its end across the hand-offs the Java library marks (task submit, run, and the wait for it); its pieces tile the latency. " +
		"One row per thread; hatched pieces ran on a thread outside the request. JFR records no other wake-up edges: a hand-off the library does not mark shows only as the waiting thread's wait.",
}

// jvmRequestWords are a JVM recording's words when it has request
// boundaries and critical paths (the Java library's events, docs/jfr.md).
var jvmRequestWords = func() words {
	w := jvmWords
	w.critical = "on the critical path"
	w.budgetIntro = "Each term is an application frame, the mechanism beneath it and the kind of wait, from the JFR wait events of each request's threads. The pale bar is thread time (every thread of the request, so parallel waits count more than once); " +
		"the solid bar is the time the term spent on the critical path, walked across the hand-offs the Java library marks. Running and runnable time are not measured: JFR records waits and execution samples, not a thread's time on and off the CPU."
	return w
}()

// hasPaths reports whether a group has critical paths: a JVM recording
// made with the Java library's request events.
func hasPaths(g *render.Group) bool { return g.Median != nil || g.Slowest != nil }

func wordsOf(o Options) words {
	if o.jvm {
		return jvmWords
	}
	return goWords
}

// jvmBudgetLead names the biggest term of a JVM recording's budget; its
// shares of the mean only when the load's latencies were given.
func jvmBudgetLead(g *render.Group) []string {
	size := func(t *render.Term) float64 { return t.Wait.Ms() }
	if hasPaths(g) {
		size = func(t *render.Term) float64 { return t.Critical.Ms() }
	}
	var top *render.Term
	for i := range g.Terms {
		if top == nil || size(&g.Terms[i]) > size(top) {
			top = &g.Terms[i]
		}
	}
	if top == nil {
		return []string{"No wait of a request was recorded: JFR records a wait only if it lasts at least its event's threshold."}
	}
	how := top.Kind
	if top.Mechanism != "" {
		how += " in " + frame.Short(top.Mechanism)
	}
	parts := []string{"The biggest term is ", termLabel(*top), fmt.Sprintf(" (%s): ", how), fmtMs(size(top)) + " per request"}
	if mean := g.Requests.Mean.Ms(); mean > 0 && hasPaths(g) {
		return append(parts, fmt.Sprintf(" on the critical path of the %s mean (%s).", fmtMs(mean), fmtPct(top.CriticalPct)))
	} else if mean > 0 {
		return append(parts, fmt.Sprintf(" of the %s mean (%s).", fmtMs(mean), fmtPct(top.SharePct)))
	}
	return append(parts, ".")
}

// jvmCoverageNote says what the budget of a JVM recording adds up to, and
// what it cannot say.
func jvmCoverageNote(g *render.Group) string {
	if g.Requests.Mean.Ms() <= 0 {
		return "Latency not measured: a recording has no request boundaries, so the bars are time per request, not shares of latency (--requests-from gives latencies from the load's results). Running and runnable: not measured."
	}
	s := fmt.Sprintf("Thread time sums to %s of the mean latency", fmtPct(g.Coverage.GoroutineSumPct))
	if hasPaths(g) {
		s += fmt.Sprintf(" and the critical path's waits to %s", fmtPct(g.Coverage.CriticalPct))
	}
	return s + ". Running and runnable: not measured, so the rest of the mean is CPU, CPU queueing and waits under the JFR thresholds."
}

// jvmPathSection says why a JVM recording has no critical-path walk.
func jvmPathSection() Section {
	var b body
	b.p("note", "Not measured: JFR records waits per thread without wake-up edges, so there is no walk from a request's end back over the work it waited on. "+
		"The budget takes a request's critical path to be its handler thread's waits; work handed to another thread shows only as the handler's wait for it (Future.get, a queue).")
	return Section{Title: "Critical path", Body: b.html()}
}

// jvmLatencySection stands for the latency histogram of a JVM recording
// analysed without the load's results.
func jvmLatencySection() Section {
	var b body
	b.p("note", "Not measured: a recording has no request boundaries. Give --requests-from the `latscope load -o` results of the load that drove the recording for latencies and percentiles.")
	return Section{Title: "Latency distribution", Body: b.html()}
}
