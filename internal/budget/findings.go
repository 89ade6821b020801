package budget

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/tracelog"
)

// FindingKind classifies a Finding.
type FindingKind uint8

// Finding kinds.
const (
	FindNoRequests         FindingKind = iota // nothing to analyse: say how to add tasks
	FindInferred                              // requests inferred from net/http or grpc-go server goroutines
	FindCutByWindow                           // requests cut by the trace window were excluded
	FindWarmup                                // the first requests are much slower: warm-up in the window
	FindCPUSaturated                          // Ps busy nearly all the time: latency contains CPU queueing
	FindOverfull                              // goroutine time over 100 % of latency in requests that never fork
	FindUnexplained                           // critical-path time the timelines could not explain
	FindNoMatch                               // a prediction or filter matched nothing (an error for the CLI)
	FindCPUMismatch                           // trace running time and the independent CPU counter disagree
	FindHostBusy                              // Ps busy nearly all the time, but the process's own counter shows it was not
	FindCoverage                              // critical waits plus independent CPU outside the coverage band
	FindTransport                             // time outside the requests that the server's transport goroutines show (gRPC)
	FindUncounted                             // a server framework's requests ran outside every request counted
	FindBadRequestLog                         // latscope.request logs without a valid traceparent
	FindWarmupInconclusive                    // the warm-up ratio's interval contains the bar, or too few requests to judge it
	FindJIT                                   // a JVM's JIT compiler took a share of its CPU over the recording: not a steady state
)

var findingNames = [...]string{
	FindNoRequests: "no-requests", FindInferred: "inferred", FindCutByWindow: "cut-by-window",
	FindWarmup: "warm-up", FindCPUSaturated: "cpu-saturated", FindOverfull: "overfull",
	FindUnexplained: "unexplained", FindNoMatch: "no-match", FindCPUMismatch: "running-exceeds-cpu",
	FindHostBusy: "host-busy", FindCoverage: "coverage", FindTransport: "outside-request", FindUncounted: "uncounted-requests",
	FindBadRequestLog: "bad-request-log", FindWarmupInconclusive: "warm-up-inconclusive", FindJIT: "jit-compiling",
}

// String returns the kind's name as used in JSON.
func (k FindingKind) String() string { return findingNames[k] }

// Finding is a typed warning: a plain-words statement about the input that
// changes how the numbers may be read. Refuse findings mean a table would
// mislead and is not printed.
type Finding struct {
	Kind   FindingKind
	Group  string // request type, or "" for the whole trace
	Text   string
	Refuse bool
	// Option names the option a no-match finding is about ("what-if",
	// "trace-id"), for the error a command prints; "" for the others.
	Option string
}

// Error returns the finding's text.
func (f *Finding) Error() string { return f.Text }

// Thresholds used by findings; where each comes from is in docs/method.md
// §6, "Findings and their thresholds".
const (
	// SaturatedBusy is the share of P time busy above which CPU queueing is
	// part of latency.
	SaturatedBusy = 0.90
	// WarmupRatio: the first tenth of requests (by start) being this much
	// slower than the rest, the whole 95 % interval of the ratio above it,
	// means the window includes warm-up (JudgeWarmup).
	WarmupRatio = 1.5
	// JITShare: a JVM whose JIT compiler compiled for more than this share
	// of the JVM's CPU time over the recording was not at a steady state —
	// compare's bar, 5 %: a demand that moves by less is not judged a
	// change.
	JITShare = 0.05
)

func findings(res *Result, a *Analyzer) []error {
	var out []error
	add := func(f *Finding) { out = append(out, f) }
	switch {
	case a.traceErr != nil:
		add(&Finding{Kind: FindNoMatch, Refuse: true, Option: "trace-id", Text: a.traceErr.Error()})
	case a.opts.TraceID != "" && a.matched == 0:
		add(&Finding{Kind: FindNoMatch, Refuse: true, Option: "trace-id", Text: fmt.Sprintf("%s: no request that began and ended in the trace has this trace ID (%d of its requests carry a trace ID in a %s log)",
			a.traceWant, res.Info.TracedRequests, tracelog.Request)})
	case len(res.Groups) == 0 || total(res.Groups) == 0:
		add(&Finding{Kind: FindNoRequests, Refuse: true, Text: noRequestsText(res)})
	}
	if n := res.Info.ExcludedUntyped; n > 0 {
		add(&Finding{Kind: FindCutByWindow, Text: fmt.Sprintf("%d task(s) that began before the trace are excluded (the trace does not record their type)", n)})
	}
	if n := res.Info.OrphanTasks; n > 0 {
		add(&Finding{Kind: FindCutByWindow, Text: fmt.Sprintf("%d task(s) whose parent task began before the trace are excluded: pieces of requests the trace cut (OpenTelemetry's SDK begins a task per span), not requests", n)})
	}
	if n := res.Info.CallTasks; n > 0 {
		add(&Finding{Kind: FindCutByWindow, Text: fmt.Sprintf("%d task(s) of outbound calls outside any request are excluded (%s: a background job's calls, or those of requests begun before the trace)", n, tracelog.Call)})
	}
	if n := res.Info.ExcludedUnrouted; n > 0 {
		add(&Finding{Kind: FindCutByWindow, Text: fmt.Sprintf("%d request(s) still open at the trace's end are excluded: their route, logged at a request's end (%s), is not in the trace", n, tracelog.Route)})
	}
	if n := res.Info.BadRequestLogs; n > 0 {
		add(&Finding{Kind: FindBadRequestLog, Text: fmt.Sprintf("%d %s log(s) hold no valid traceparent: those requests have no trace ID", n, tracelog.Request)})
	}
	if res.Info.Inferred {
		add(&Finding{Kind: FindInferred, Text: a.inferredText()})
	}
	if d, p := res.Info.Duration(), res.Info.Procs; d > 0 && p > 0 {
		if busy := float64(res.Info.BusyOutsideCalls()) / float64(d*int64(p)); busy > SaturatedBusy {
			add(&Finding{Kind: FindCPUSaturated, Text: fmt.Sprintf("Ps were running %.0f%% of the trace outside system calls (GOMAXPROCS %d): the process is CPU-saturated and latency contains CPU queueing; a budget taken now overstates every wait", busy*100, p)})
		}
	}
	if f := offCPUFinding(res.Info); f != nil {
		add(f)
	}
	if f := a.uncountedFinding(res); f != nil {
		add(f)
	}
	for _, g := range res.Groups {
		out = append(out, groupFindings(g, a)...)
		if g.Transport != nil && g.Count > 0 {
			out = append(out, &Finding{Kind: FindTransport, Group: g.Name, Text: transportText(g)})
		}
		if b := g.RunnableBefore; b != nil && g.Count > 0 && b.Mean >= beforeShare*g.Latency.Mean {
			out = append(out, &Finding{Kind: FindTransport, Group: g.Name, Text: beforeText(g)})
		}
	}
	return out
}

// uncountedFinding says when a server framework latscope knows served
// requests that no request counted: never present another kind of request
// as the service's (issue #32).
func (a *Analyzer) uncountedFinding(res *Result) *Finding {
	// net/http handlers outside every task are not said: a task that began
	// before the trace and a same-process upstream without tasks look alike.
	if a.uncountedRPC == 0 {
		return nil
	}
	what := "the trace has no other requests"
	if n := total(res.Groups); n > 0 {
		what = fmt.Sprintf("the %d requests counted are not all of the service's", n)
	}
	return &Finding{Kind: FindUncounted, Text: fmt.Sprintf("%d gRPC requests (grpc-go handler goroutines started in the trace) ran outside every request counted: %s; "+
		"make each RPC a task too (a unary and a stream interceptor calling trace.NewTask), or take the trace without tasks to infer them", a.uncountedRPC, what)}
}

func total(gs []*Group) int {
	n := 0
	for _, g := range gs {
		n += g.Count
	}
	return n
}

func noRequestsText(res *Result) string {
	if res.Info.Tasks > 0 {
		return fmt.Sprintf("no request began and ended inside the trace (%d task(s) seen, all cut by the window): record for longer", res.Info.Tasks)
	}
	return "the trace has no requests: no runtime/trace tasks and no net/http or grpc-go server requests. Make each request a task: " +
		"ctx, task := trace.NewTask(r.Context(), \"request\"); defer task.End() — or use latscope's agent middleware"
}

func groupFindings(g *Group, a *Analyzer) []error {
	var out []error
	if n := g.Excluded(); n > 0 {
		out = append(out, &Finding{Kind: FindCutByWindow, Group: g.Name, Text: fmt.Sprintf("%s: %d request(s) cut by the trace window are excluded (%d began before it, %d had not ended)", g.Name, n, g.ExcludedBefore, g.ExcludedAfter)})
	}
	if g.Count == 0 {
		return out
	}
	if f := warmup(g, a.groups[g.Name]); f != nil {
		out = append(out, f)
	}
	if g.Forked == 0 && a.groups[g.Name].overfull > 0 {
		out = append(out, &Finding{Kind: FindOverfull, Group: g.Name, Text: fmt.Sprintf("%s: %d request(s) that never fork have goroutine time over 100%% of their latency: the window or the task boundaries are wrong", g.Name, a.groups[g.Name].overfull)})
	}
	if tot := g.Latency.Mean * float64(g.Count); tot > 0 && float64(g.Unknown)/tot > 0.01 {
		out = append(out, &Finding{Kind: FindUnexplained, Group: g.Name, Text: fmt.Sprintf("%s: %.1f%% of the critical path could not be explained from the goroutine timelines", g.Name, 100*float64(g.Unknown)/tot)})
	}
	for _, p := range g.Predictions {
		if !p.Matched {
			out = append(out, &Finding{Kind: FindNoMatch, Group: g.Name, Refuse: true, Option: "what-if", Text: goWording.NoMatchText(p.Spec, closest(p.A+" "+p.B, frameNames(a.terms.list, g.Terms)))})
		}
	}
	return out
}

// warmup judges the group's requests in start order (JudgeWarmup).
func warmup(g *Group, gs *groupState) *Finding {
	idx := make([]int, len(gs.Lat))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return gs.begins[idx[i]] < gs.begins[idx[j]] })
	lat := make([]float64, len(idx))
	for i, j := range idx {
		lat[i] = float64(gs.Lat[j])
	}
	return goWording.WarmupFinding(g.Name, JudgeWarmup(lat))
}

// frameNames lists the distinct frames on the call paths of a group's
// terms: the names a prediction for that group can use.
func frameNames(list []Term, in []TermStat) []string {
	var names []string
	for _, ts := range in {
		for _, f := range list[ts.Term].path() {
			if !slices.Contains(names, f) {
				names = append(names, f)
			}
		}
	}
	return names
}

// closest is Closest's three nearest candidates to name, by their short
// names.
func closest(name string, candidates []string) []string {
	c := Closest(name, candidates, 3)
	for i := range c {
		c[i] = frame.Short(c[i])
	}
	return c
}

// Closest returns up to n candidates nearest to name: substring matches
// first, then by edit distance of the short names.
func Closest(name string, candidates []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	var sc []scored
	ln := strings.ToLower(name)
	for _, c := range candidates {
		lc := strings.ToLower(frame.Short(c))
		d := levenshtein(ln, lc)
		if strings.Contains(lc, ln) || strings.Contains(ln, lc) {
			d = -1
		}
		sc = append(sc, scored{c, d})
	}
	sort.SliceStable(sc, func(i, j int) bool { return sc[i].d < sc[j].d })
	var out []string
	for i := 0; i < len(sc) && i < n; i++ {
		out = append(out, sc[i].s)
	}
	return out
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// offCPUFinding says, from the CPU samples, when the Ps' threads had a CPU
// for less of the Ps' running time than RunningExcess allows, bound and
// all (TraceInfo.ProcCPUShare): the check the process's own CPU counter
// makes (CrossCheck), on the instrument every capture carries.
func offCPUFinding(i TraceInfo) *Finding {
	share, bound, ok := i.ProcCPUShare()
	if !ok || (share+bound)*RunningExcess >= 1 {
		return nil
	}
	return &Finding{Kind: FindCPUMismatch, Text: fmt.Sprintf(
		"the CPU samples account for %.0f%% (±%.0f%%) of the time the Ps were running outside system calls (%d samples): their threads were off-CPU for the rest while Go counted them running — other processes, CFS throttling, more Ps than the CPUs the process may use (GOMAXPROCS %d), or the kernel keeping a runtime thread queued behind another on one core; running time, and a prediction that scales it, holds that wait",
		100*share, 100*bound, i.ProcSamples, i.Procs)}
}
