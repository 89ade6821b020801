package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/whatif"
)

// WriteJSON writes the report as indented JSON (schema: docs/json.md).
func (r *Report) WriteJSON(w io.Writer) error { return r.writeAny(w, r) }

func (r *Report) writeAny(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	t := r.Trace
	switch {
	case t.JVM && t.Goroutines == 0: // read for its scheduler churn only: no threads counted
		ew.printf("latscope: %s — %.0f ms of recording, %d execution samples\n", t.File, t.Duration.Ms(), t.CPUSamples)
	case t.JVM:
		ew.printf("latscope: %s — %.0f ms of recording, %d threads, %d hardware threads, %d CPU samples\n", t.File, t.Duration.Ms(), t.Goroutines, t.GOMAXPROCS, t.CPUSamples)
	default:
		ew.printf("latscope: %s — %.0f ms of trace, %d goroutines, GOMAXPROCS %d, %d CPU samples\n", t.File, t.Duration.Ms(), t.Goroutines, t.GOMAXPROCS, t.CPUSamples)
	}
	if t.AppRule != "" {
		ew.printf("%s\n", t.AppRule)
	}
	for _, f := range r.Findings {
		if f.Refuse {
			ew.printf("\nrefused: %s\n", f.Text)
		}
	}
	for i := range r.Groups {
		if !refused(r.Findings, r.Groups[i].Name) {
			r.writeGroup(ew, &r.Groups[i])
		}
	}
	r.writeOutside(ew)
	var notes []Finding
	for _, f := range r.Findings {
		if !f.Refuse {
			notes = append(notes, f)
		}
	}
	if len(notes) > 0 {
		ew.printf("\nfindings:\n")
		for _, f := range notes {
			ew.printf("  - %s\n", f.Text)
		}
	}
	r.writeChurn(ew)
	return ew.err
}

func refused(fs []Finding, group string) bool {
	for _, f := range fs {
		if f.Refuse && (f.Group == "" || f.Group == group) {
			return true
		}
	}
	return false
}

func (r *Report) writeGroup(ew *errWriter, g *Group) {
	q := g.Requests
	kind := "requests"
	if g.Inferred {
		kind = "inferred requests"
	}
	ew.printf("\n%s: %d %s (%d cut by the window, excluded), %.1f/s\n", g.Name, q.Count, kind, q.Excluded, q.RPS)
	if q.Count == 0 {
		return
	}
	if q.Mean == 0 && r.Trace.JVM {
		ew.printf("latency: not measured (a recording has no request boundaries; --requests-from gives latencies from the load's results)\n")
	} else {
		ew.printf("latency ms: mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n", q.Mean.Ms(), q.P50.Ms(), q.P90.Ms(), q.P99.Ms(), q.Max.Ms())
	}
	writeSlowTraces(ew, g)
	r.writeBudget(ew, g)
	if r.tree {
		r.writeTree(ew, g)
	}
	r.writePredictions(ew, g)
	writePath(ew, "median", g.Median, r.Trace.JVM)
	if g.Slowest != nil && (g.Median == nil || g.Slowest.Task != g.Median.Task) {
		writePath(ew, "slowest", g.Slowest, r.Trace.JVM)
	}
}

func (r *Report) writeBudget(ew *errWriter, g *Group) {
	who := "goroutine"
	if r.Trace.JVM {
		who = "thread"
	}
	ew.printf("\nper request, ms           %s time = wait sum; critical = on the critical path\n", who)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	termsafe.Fprintf(tw, "term\tmechanism\tkind\twait\tshare\tcritical\tfix\trequests\t  %s\n", "on the path, really")
	// A JVM recording without latencies has no mean to share: its shares
	// are not measured, not 0.
	noShare := r.Trace.JVM && g.Requests.Mean.Ms() <= 0
	var folded Term
	nFolded := 0
	for _, t := range g.BudgetTerms() {
		// Fold small terms; without latencies (a JVM recording counted by
		// --requests) shares are unknown, so nothing is folded.
		if g.Requests.Mean.Ms() > 0 && t.SharePct < r.minShare && t.CriticalPct < r.minShare {
			folded.Wait += t.Wait
			folded.Critical += t.Critical
			folded.SharePct += t.SharePct
			nFolded++
			continue
		}
		share := fmt.Sprintf("%.1f%%", t.SharePct)
		if noShare {
			share = "—"
		}
		termsafe.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%s\t%.2f\t%.2f\t%d/%d\t  %s\n", nameOr(t.Name, termName(t.Frame)), mechanismOf(t), t.Kind,
			t.Wait.Ms(), share, t.Critical.Ms(), t.FixPotential.Ms(), t.Requests, g.Requests.Count, causes(t))
	}
	if nFolded > 0 {
		termsafe.Fprintf(tw, "%s\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", fmt.Sprintf("(%d smaller terms)", nFolded), folded.Wait.Ms(), folded.SharePct, folded.Critical.Ms())
	}
	c := g.CPU
	mean := g.Requests.Mean.Ms()
	if r.Trace.JVM && c.runningExact { // the Java library measured each request's thread CPU; JFR records no runnable time
		termsafe.Fprintf(tw, "running (on CPU, measured by the library)\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", c.Running.Ms(), pct(c.Running.Ms(), mean), c.CriticalRunning.Ms())
		termsafe.Fprintf(tw, "runnable (waiting for a CPU)\t\t\tnot measured\t\t\t\t\t\n")
	} else if r.Trace.JVM { // JFR records waits and samples, not a thread's running and runnable time
		termsafe.Fprintf(tw, "running (on CPU)\t\t\tnot measured\t\t\t\t\t\n")
		termsafe.Fprintf(tw, "runnable (waiting for a CPU)\t\t\tnot measured\t\t\t\t\t\n")
	} else if bf := c.ByFrame; bf != nil && len(g.CPUTerms) > 0 {
		termsafe.Fprintf(tw, "running, no frame found\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", bf.Unattributed.Ms(), pct(bf.Unattributed.Ms(), mean), bf.CriticalUnattributed.Ms())
		termsafe.Fprintf(tw, "runnable (scheduler wait)\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", c.Runnable.Ms(), pct(c.Runnable.Ms(), mean), c.CriticalRunnable.Ms())
	} else {
		termsafe.Fprintf(tw, "running (on CPU as Go sees it)\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", c.Running.Ms(), pct(c.Running.Ms(), mean), c.CriticalRunning.Ms())
		termsafe.Fprintf(tw, "runnable (scheduler wait)\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", c.Runnable.Ms(), pct(c.Runnable.Ms(), mean), c.CriticalRunnable.Ms())
	}
	if g.Coverage.Unknown.Ms() > 0 {
		termsafe.Fprintf(tw, "unknown (not explained by the timelines)\t\t\t\t\t%.2f\t\t\t\n", g.Coverage.Unknown.Ms())
	}
	if noShare {
		termsafe.Fprintf(tw, "total / mean\t\t\tnot measured\t\t\t\t\t\n")
	} else {
		termsafe.Fprintf(tw, "total / mean\t\t\t%.1f%%\t\t%.1f%%\t\t\t\n", g.Coverage.GoroutineSumPct, g.Coverage.CriticalPct)
	}
	tw.Flush()
	cv := g.Coverage
	if mean > 0 {
		ew.printf("waits are %.1f%% of the mean (%s time)", cv.WaitSumPct, who)
	} else {
		ew.printf("no latencies, so no shares of the mean")
	}
	switch {
	case c.Independent != nil:
		ew.printf("; critical waits + critical runnable %.2f ms + independent CPU %.2f ms = %.1f%% of the mean (%.2f ms unexplained)", c.CriticalRunnable.Ms(), c.Independent.Ms(), *cv.IndependentPct, cv.Unexplained.Ms())
		if r.Trace.CPUSource == "agent-log" {
			ew.printf("; CPU from the agent's counter log in the trace")
		}
		ew.printf("\n")
	case r.Trace.CPUNote != "":
		ew.printf("; no independent CPU reading: %s (pass --cpu-seconds to cross-check)\n", r.Trace.CPUNote)
	default:
		ew.printf("; no independent CPU reading (pass --cpu-seconds to cross-check)\n")
	}
	r.writeCPUByFrame(ew, g)
	if g.forks {
		ew.printf("why wait and critical differ: %d of %d requests fork, so goroutine time counts parallel waits more than once; the critical path counts each instant once.\n", g.Requests.Forked, g.Requests.Count)
	}
	if len(g.Regions) > 1 {
		ew.printf("regions (%s time %%, CPU samples %%):", who)
		for _, rg := range g.Regions {
			if rg.WallPct < 0.05 && rg.CPUPct < 0.05 {
				continue
			}
			ew.printf("  %s %.1f%%/%.1f%%", nameOr(rg.Name, "(none)"), rg.WallPct, rg.CPUPct)
		}
		ew.printf("\n")
	}
}

// BudgetTerms are a group's rows of the budget: its waits and the CPU of
// its frames, most critical first.
func (g *Group) BudgetTerms() []Term {
	if len(g.CPUTerms) == 0 {
		return g.Terms
	}
	out := append(append(make([]Term, 0, len(g.Terms)+len(g.CPUTerms)), g.Terms...), g.CPUTerms...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Critical != out[j].Critical {
			return out[i].Critical > out[j].Critical
		}
		return out[i].Wait > out[j].Wait
	})
	return out
}

// FewCPUSamples is the number of CPU samples below which the text calls the
// CPU by frame rough: a frame's CPU from n of its samples has a relative
// error near 1/√n, over 14 % below 50 (the scheduler's bar, method.md §9).
const FewCPUSamples = 50

// writeCPUByFrame says how the running time was split by frame, and from
// what (docs/method.md §3, "CPU by frame").
func (r *Report) writeCPUByFrame(ew *errWriter, g *Group) {
	bf := g.CPU.ByFrame
	if bf == nil || g.CPU.Running <= 0 {
		return
	}
	framed := bf.FromSamples + bf.FromStacks
	switch {
	case r.Trace.CPUByFrame == CPUFromSamples:
		n := *r.Trace.CPUFrameSamples
		ew.printf("CPU by frame from %d CPU samples: %.2f of %.2f ms running per request in application frames", n, framed.Ms(), g.CPU.Running.Ms())
		if bf.FromStacks.Ms() >= 0.005 {
			ew.printf(" (%.2f ms of it from the stacks at state changes, an estimate, where no sample fell)", bf.FromStacks.Ms())
		}
		if n < FewCPUSamples {
			ew.printf("; few samples, so each frame's CPU is rough")
		}
		ew.printf("\n")
	default:
		ew.printf("CPU by frame from the stacks at state changes, an estimate (no CPU samples in the trace; run a CPU profile during it, as capture does): %.2f of %.2f ms running per request in application frames\n",
			framed.Ms(), g.CPU.Running.Ms())
	}
}

// mechanismOf is a term's mechanism as the tables print it.
func mechanismOf(t Term) string {
	if t.Beneath {
		return "(" + budget.BeneathMechanism + ")"
	}
	return frame.Short(t.Mechanism)
}

func termName(f string) string {
	if f == "" {
		return "(no app frame)"
	}
	return frame.Short(f)
}

func nameOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// causes names what was really happening when it differs from the wait's
// kind, and for a frame's CPU, the running (and preempted runnable) time
// that went along with it.
func causes(t Term) string {
	if v := t.Along.Ms(); v >= 0.01 {
		return fmt.Sprintf("and %.2f running or preempted that no sample saw (in fix)", v)
	}
	if len(t.Causes) == 0 || (len(t.Causes) == 1 && t.Causes[t.Kind] > 0) {
		return strings.TrimPrefix(roots(t), "; ")
	}
	type kv struct {
		k string
		v float64
	}
	var cs []kv
	for k, d := range t.Causes {
		if v := d.Ms(); v >= 0.01 {
			cs = append(cs, kv{k, v})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].v != cs[j].v {
			return cs[i].v > cs[j].v
		}
		return cs[i].k < cs[j].k // a tie (Ms rounds) in a fixed order, not the map's
	})
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %.2f", c.k, c.v))
	}
	return strings.Join(parts, ", ") + roots(t)
}

// roots names the largest root causes (docs/method.md §4) of a term's
// borrowed critical time, at most two, with the hand-offs between.
func roots(t Term) string {
	var parts []string
	for _, rc := range t.RootCauses {
		if rc.Critical.Ms() < 0.01 || len(parts) == 2 {
			break
		}
		via := ""
		if rc.Hops > 0 {
			via = fmt.Sprintf(", %d hand-off", rc.Hops)
			if rc.Hops > 1 {
				via += "s"
			}
			via += " away"
		}
		parts = append(parts, fmt.Sprintf("%s %.2f%s", rc.Name, rc.Critical.Ms(), via))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; root cause " + strings.Join(parts, "; ")
}

func pct(x, of float64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * x / of
}

func (r *Report) writePredictions(ew *errWriter, g *Group) {
	if len(g.Predictions) == 0 {
		return
	}
	tp := g.Throughput
	est := ""
	if tp.ClientsEstimated {
		est = " (estimated from the trace: Σ latency / window)"
		if q := g.ServerQueue; q != nil && q.Mean > 0 {
			// the clients waiting in the server's queue are not in it
			est = fmt.Sprintf(" (estimated from the trace: Σ latency / window; the %.3g ms each request waited in the server's queue before it began are not counted, and the queueing model counts them)", q.Mean.Ms())
		}
	}
	ew.printf("\npredictions (closed model: %.3g clients%s; CPU cap %.0f/s from %.3g cores)\n", tp.Clients, est, tp.CPUCapRPS, tp.Cores)
	if g.Predictions[0].Method != "" {
		r.writeEngine(ew, g)
		return
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	termsafe.Fprintf(tw, "what-if\tmean ms\tΔ mean\tp99 ms\trps\tlimited by\t\n")
	termsafe.Fprintf(tw, "(as measured)\t%.2f\t\t%.2f\t%.1f\t\t\n", g.Requests.Mean.Ms(), g.Requests.P99.Ms(), tp.MeasuredRPS)
	for _, p := range g.Predictions {
		p99 := fmt.Sprintf("%.2f", p.P99.Ms())
		limit := p.Limit
		if p.Queue.Ms() > 0 {
			p99 = "n/a"
			limit += fmt.Sprintf(", +%.2f ms queued", p.Queue.Ms())
		}
		termsafe.Fprintf(tw, "%s\t%.2f\t%+.1f%%\t%s\t%.1f\t%s\t\n", p.Spec, p.Mean.Ms(), p.DeltaPct, p99, p.RPS, limit)
	}
	tw.Flush()
}

// writeEngine prints the prediction engine's what-ifs: each with its 95 %
// interval and method, and beneath the table why that method.
func (r *Report) writeEngine(ew *errWriter, g *Group) {
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	termsafe.Fprintf(tw, "what-if\tmean ms\t95 %%\tΔ mean\tp99 ms\trps\tlimited by\tmethod\t\n")
	termsafe.Fprintf(tw, "(as measured)\t%.2f\t\t\t%.2f\t%.1f\t\t\t\n", g.Requests.Mean.Ms(), g.Requests.P99.Ms(), g.Throughput.MeasuredRPS)
	for _, p := range g.Predictions {
		p99, ci := "n/a", "n/a"
		if p.P99 > 0 {
			p99 = fmt.Sprintf("%.2f", p.P99.Ms())
		}
		if p.MeanLow != nil && p.MeanHigh != nil {
			ci = fmt.Sprintf("%.2f–%.2f", p.MeanLow.Ms(), p.MeanHigh.Ms())
		}
		limit := p.Limit
		if p.Method == string(whatif.Timeline) && p.Queue.Ms() > 0 {
			limit += fmt.Sprintf(", +%.2f ms queued", p.Queue.Ms())
		}
		termsafe.Fprintf(tw, "%s\t%.2f\t%s\t%+.1f%%\t%s\t%.1f\t%s\t%s\t\n", p.Spec, p.Mean.Ms(), ci, p.DeltaPct, p99, p.RPS, limit, p.Method)
	}
	tw.Flush()
	for _, p := range g.Predictions {
		termsafe.Fprintf(ew, "  %s, by the %s: %s\n", p.Spec, p.Method, p.Why)
	}
}

// writePath prints a critical path; a JVM recording's are by thread (T
// and the thread's index among the request's) and request id.
// writeSlowTraces lists the slowest requests' trace IDs, to find their
// spans in a tracing UI (and `--trace-id` to come back to one).
func writeSlowTraces(ew *errWriter, g *Group) {
	if len(g.SlowTraces) == 0 {
		return
	}
	ew.printf("slowest by trace ID (%d of %d requests carry one):\n", g.TracedRequests, g.Requests.Count)
	for _, s := range g.SlowTraces {
		ew.printf("  %s  %.2f ms  (task %d)\n", s.TraceID, s.Latency.Ms(), s.Task)
	}
}

func writePath(ew *errWriter, label string, p *Path, jvm bool) {
	if p == nil {
		return
	}
	task, who, g := "task", "goroutines", "G"
	if jvm {
		task, who, g = "request", "threads", "T"
	}
	trace := ""
	if p.TraceID != "" {
		trace = ", trace " + p.TraceID
	}
	ew.printf("\ncritical path of the %s request (%s %d%s, %.2f ms, %d %s):\n", label, task, p.Task, trace, p.Latency.Ms(), p.Goroutines, who)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, r := range pathRows(p.Segments) {
		if r.pieces > 1 {
			r.what += fmt.Sprintf(" (%d pieces)", r.pieces)
		}
		termsafe.Fprintf(tw, "  +%.2f\t%.2f ms\t%s%d\t%s\n", r.startMs, r.durMs, g, r.g, r.what)
	}
	tw.Flush()
}

// pathRow is one printed row of a critical path.
type pathRow struct {
	startMs, durMs float64
	g              int64
	what           string
	pieces         int
}

// pathRows describes a path's segments. On a long path, segments under
// 10 µs are left out, and consecutive rows that say the same thing on the
// same goroutine (running, then a 5 µs wait, then running) are one row:
// its duration is the sum of the pieces', its start the first's.
func pathRows(segs []Segment) []pathRow {
	var out []pathRow
	for _, s := range segs {
		if s.Dur.Ms() < 0.01 && len(segs) > 12 {
			continue
		}
		what := s.Kind
		switch {
		case s.Borrowed:
			what = s.Term
			for _, h := range s.Via { // each hand-off, nearest the request first
				what += " ← " + h.Kind + " on G" + fmt.Sprint(h.Goroutine)
			}
			if s.Cause != "" {
				what += " ← " + s.Cause + " on G" + fmt.Sprint(s.Goroutine)
			} else {
				what += " ← " + s.Kind + " on G" + fmt.Sprint(s.Goroutine)
			}
		case s.Term != "":
			what = s.Term
		}
		if s.Contention {
			what += " (held by another request)"
		}
		if n := len(out); n > 0 && out[n-1].g == s.Goroutine && out[n-1].what == what {
			out[n-1].durMs += s.Dur.Ms()
			out[n-1].pieces++
			continue
		}
		out = append(out, pathRow{startMs: s.Start.Ms(), durMs: s.Dur.Ms(), g: s.Goroutine, what: what, pieces: 1})
	}
	return out
}

func (r *Report) writeOutside(ew *errWriter) {
	if len(r.Outside) == 0 {
		return
	}
	keys := make([]string, 0, len(r.Outside))
	for k := range r.Outside {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if oi, oj := r.Outside[keys[i]], r.Outside[keys[j]]; oi != oj {
			return oi > oj
		}
		return keys[i] < keys[j] // a tie in a fixed order, not the map's
	})
	over := "trace"
	if r.Trace.JVM {
		over = "recording"
	}
	ew.printf("\noutside any request (totals over the %s, never divided by requests):", over)
	for _, k := range keys {
		ew.printf("  %s %.1f ms", k, r.Outside[k].Ms())
	}
	ew.printf("\n")
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { termsafe.Fprintf(e, format, args...) }
