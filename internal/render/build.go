package render

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/units"
	"github.com/latscope/latscope/internal/whatif"

	"github.com/latscope/latscope/internal/opterr"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// ErrNoMatch is wrapped by Build's errors for filters that match nothing.
var ErrNoMatch = errors.New("matches nothing")

// Sources of the frames of running time (Trace.CPUByFrame).
const (
	CPUFromSamples = "cpu-samples"
	CPUFromStacks  = "state-stacks"
)

// Build derives a report from an analysis result.
func Build(res *budget.Result, in Inputs) (*Report, error) {
	groups, err := filterGroups(res, in)
	if err != nil {
		return nil, err
	}
	in, src, note := withCounter(res, in)
	rep := &Report{Trace: traceJSON(res, in), Outside: outsideJSON(res), minShare: in.MinShare, tree: in.Tree}
	total := 0
	for _, g := range res.Groups {
		total += g.Count
	}
	matched := in.Frame == nil
	for _, g := range groups {
		gj := buildGroup(res, g, in, total)
		matched = matched || len(gj.Terms) > 0 || len(gj.CPUTerms) > 0
		rep.Groups = append(rep.Groups, gj)
	}
	if !matched {
		return nil, opterr.Wrap("frame", fmt.Errorf("%q %w: no application frame matches%s", in.Frame, ErrNoMatch, closestShort(in.Frame.String(), appFrames(res))))
	}
	if src != "" {
		v := units.Round3(in.CPUSeconds)
		rep.Trace.CPUSeconds, rep.Trace.CPUSource = &v, src
	}
	rep.Trace.CPUNote = note
	if len(rep.Groups) > 0 {
		p := rep.Groups[0]
		rep.Requests, rep.Terms, rep.CPUTerms, rep.CPU, rep.Coverage = p.Requests, p.Terms, p.CPUTerms, p.CPU, p.Coverage
	}
	if rep.Terms == nil {
		rep.Terms = []Term{}
	}
	if rep.CPUTerms == nil {
		rep.CPUTerms = []Term{}
	}
	rep.Findings = findingsJSON(res, rep, in)
	markJVM(rep)
	return rep, nil
}

// withCounter returns in with the independent CPU counter resolved: the
// caller's when given, else the agent's counter log in the trace when it
// can stand for the window; the source ("" for none) and, when the log
// could not serve, why.
func withCounter(res *budget.Result, in Inputs) (Inputs, string, string) {
	if in.CPUSeconds >= 0 {
		return in, "given", ""
	}
	cpu, ok, why := res.Info.CPULog.Window(res.Info)
	if !ok {
		if res.Info.CPULog.Samples+res.Info.CPULog.Bad == 0 {
			why = ""
		}
		return in, "", why
	}
	in.CPUSeconds = cpu.Seconds()
	return in, "agent-log", ""
}

func filterGroups(res *budget.Result, in Inputs) ([]*budget.Group, error) {
	if in.Task == "" {
		return res.Groups, nil
	}
	var names []string
	for _, g := range res.Groups {
		if g.Name == in.Task {
			return []*budget.Group{g}, nil
		}
		names = append(names, g.Name)
	}
	if len(names) == 0 {
		return nil, opterr.Wrap("task", fmt.Errorf("%q %w: the trace has no requests", in.Task, ErrNoMatch))
	}
	return nil, opterr.Wrap("task", fmt.Errorf("%q %w (request types: %s)%s", in.Task, ErrNoMatch, strings.Join(names, ", "), closest(in.Task, names)))
}

func closest(name string, candidates []string) string {
	c := budget.Closest(name, candidates, 3)
	if len(c) == 0 {
		return ""
	}
	return "; closest: " + strings.Join(c, ", ")
}

func closestShort(name string, candidates []string) string {
	c := budget.Closest(name, candidates, 3)
	for i := range c {
		c[i] = frame.Short(c[i])
	}
	if len(c) == 0 {
		return ""
	}
	return "; closest: " + strings.Join(c, ", ")
}

func appFrames(res *budget.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range res.Terms {
		for _, f := range append(t.Path, t.Frame) {
			if f != "" && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

func traceJSON(res *budget.Result, in Inputs) Trace {
	i := res.Info
	t := Trace{File: in.File, Duration: Duration(i.Duration()), Records: i.Records, Generations: i.Generations,
		Goroutines: i.Goroutines, GOMAXPROCS: i.Procs, CPUSamples: i.CPUSamples, Tasks: i.Tasks, Inferred: i.Inferred,
		ExcludedUntyped: i.ExcludedUntyped, OrphanTasks: i.OrphanTasks, ExcludedUnrouted: i.ExcludedUnrouted}
	if d := i.Duration(); d > 0 && i.Procs > 0 {
		t.ProcBusyPct = units.Round3(100 * float64(i.ProcBusy) / float64(d*int64(i.Procs)))
	}
	if share, bound, ok := i.ProcCPUShare(); ok {
		share, bound = units.Round3(share), units.Round3(bound)
		t.ProcCPUShare, t.ProcCPUShareBound = &share, &bound
	}
	if !i.StartWall.IsZero() {
		t.StartWall = i.StartWall.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	for _, tm := range res.Terms {
		if tm.Fallback {
			t.FallbackTerms++
		}
	}
	t.Module, t.JVM = i.Module, i.JVM
	if !i.JVM {
		n := i.CPUFrameSamples
		t.CPUFrameSamples, t.CPUByFrame = &n, CPUFromStacks
		if n > 0 {
			t.CPUByFrame = CPUFromSamples
		}
	}
	t.AppRule = appRule(in.App, i.Module, i.ModuleFromMain, t.FallbackTerms, i.JVM, sawModuleCache(res))
	return t
}

// appRule says in words which rule chose the application frames.
func appRule(app []string, module string, fromMain bool, fallback int, jvm, moduleCache bool) string {
	if len(app) > 0 {
		return "application frames: packages under " + strings.Join(app, ", ") + " (as given)"
	}
	if module != "" {
		how := "as the service reported it"
		if fromMain {
			how = "the module of package main's source: a binary installed from the module cache"
		}
		s := "application frames: package main and the main module " + module + " (" + how + "), less known libraries (--app PREFIX to choose)"
		if fallback > 0 {
			s += fmt.Sprintf("; %d term(s) had no frame of it and name the innermost frame of another module instead", fallback)
		}
		return s
	}
	if jvm {
		return "application frames: classes outside the JDK, connection pools and known libraries (--app PREFIX to choose)"
	}
	s := "application frames: code built from the service's own source, not the standard library, the module cache, vendor/ or a known library (--app PREFIX to choose)"
	if fallback > 0 {
		s += fmt.Sprintf("; %d term(s) had no such frame and name the innermost frame of another module instead (a binary built from the module cache)", fallback)
	}
	if !moduleCache {
		s += "; no frame of the trace came from the module cache or vendor/, so dependencies, if any, are told apart only by the list of known libraries (a distribution's or GOPATH build shows no module versions)"
	}
	return s
}

// sawModuleCache reports whether any frame of the trace was compiled from
// the module cache or a vendor directory, so that the default rule could
// tell dependencies apart at all.
func sawModuleCache(res *budget.Result) bool {
	if res.Stacks == nil {
		return false
	}
	for id := 1; id < res.Stacks.Len(); id++ {
		for _, f := range res.Stacks.Frames(tracein.StackID(id)) {
			if frame.IsDependencyFile(f.File) {
				return true
			}
		}
	}
	return false
}

func outsideJSON(res *budget.Result) map[string]Duration {
	out := map[string]Duration{}
	for k, v := range res.Outside.ByKind {
		if v > 0 {
			out[frame.Kind(k).String()] = Duration(v)
		}
	}
	return out
}

func buildGroup(res *budget.Result, g *budget.Group, in Inputs, total int) Group {
	n := float64(max(g.Count, 1))
	per := func(ns int64) Duration { return durOf(float64(ns) / n) }
	mean := g.Latency.Mean
	gj := Group{Name: g.Name, Inferred: g.Inferred, forks: g.Forked > 0}
	gj.Requests = Requests{Count: g.Count, Excluded: g.Excluded(), ExcludedBefore: g.ExcludedBefore, ExcludedAfter: g.ExcludedAfter,
		Forked: g.Forked, Mean: durOf(mean), Min: Duration(g.Latency.Min), P50: Duration(g.Latency.P50),
		P90: Duration(g.Latency.P90), P99: Duration(g.Latency.P99), Max: Duration(g.Latency.Max)}
	if d := res.Info.Duration(); d > 0 {
		gj.Requests.rps = float64(g.Count) / (float64(d) / 1e9)
		gj.Requests.RPS = units.Round3(gj.Requests.rps)
	}
	gj.Requests.StdDev = durOf(stddev(g.Latencies, mean))
	if e := g.Transport; e != nil {
		gj.Transport = &Transport{Before: durOf(e.Before), After: durOf(e.After), BeforeN: e.BeforeN, AfterN: e.AfterN}
	}
	if b := g.RunnableBefore; b != nil {
		gj.RunnableBefore = &RunnableBefore{Requests: b.Requests, Mean: durOf(b.Mean)}
	}
	if q := g.ServerQueue; q != nil {
		gj.ServerQueue = &ServerQueue{Requests: q.Requests, Mean: durOf(q.Queue.Mean), P99: Duration(q.Queue.P99), Workers: q.Workers}
	}
	labels := budget.Labels(res.Terms)
	gj.Terms, gj.CPUTerms = []Term{}, []Term{}
	for _, ts := range g.Terms {
		t := res.Terms[ts.Term]
		if in.Frame != nil && !onPath(in.Frame, t) {
			continue
		}
		gj.Terms = append(gj.Terms, termJSON(t, labels[ts.Term], ts, n, mean))
	}
	for _, ts := range g.CPUTerms {
		t := res.Terms[ts.Term]
		if in.Frame != nil && !onPath(in.Frame, t) {
			continue
		}
		gj.CPUTerms = append(gj.CPUTerms, termJSON(t, labels[ts.Term], ts, n, mean))
	}
	gj.CPU = CPU{Running: per(g.Running.Wait), Runnable: per(g.Runnable.Wait),
		CriticalRunning: per(g.Running.Critical), CriticalRunnable: per(g.Runnable.Critical), runningExact: g.RunningExact}
	if !res.Info.JVM {
		bf := g.CPUByFrame
		gj.CPU.ByFrame = &CPUByFrame{FromSamples: per(bf.FromSamples), FromStacks: per(bf.FromStacks),
			Unattributed:       per(g.Running.Wait - bf.FromSamples - bf.FromStacks),
			CriticalAttributed: per(bf.Critical), CriticalUnattributed: per(g.Running.Critical - bf.Critical)}
	}
	var indep time.Duration // independent CPU per request, over requests of every type
	hasIndep := in.CPUSeconds >= 0 && total > 0
	if hasIndep {
		indep = time.Duration(in.CPUSeconds * 1e9 / float64(total))
		gj.CPU.Independent = durPtr(Duration(indep))
	}
	gj.cov = g.Coverage(indep, hasIndep)
	gj.Coverage = coverageJSON(gj.cov)
	gj.Regions = regionsJSON(g, n)
	// the CPU cap from all the CPU a request needs: the demand reading's
	// where the input has one (a JVM recording, whose holds' CPU is in
	// their terms, not in Running nor in the library's request CPU given
	// as the independent counter), else an independent counter's
	cpuPer := indep
	if d := in.Demands.Group(g.Name); d != nil && d.Count > 0 && d.RunningExact {
		cpuPer = time.Duration(d.Running.Wait / int64(d.Count))
	}
	tp := g.Closed(res, budget.Capacity{Clients: in.Clients, Cores: in.Cores, Pool: in.Pool, CPUPerRequest: cpuPer})
	gj.Throughput = throughputJSON(tp)
	gj.Predictions, gj.whatIfErr = predictions(res, g, in, tp, indep)
	gj.Slowest, gj.Median = pathJSON(res, labels, g.Slowest), pathJSON(res, labels, g.Median)
	for _, s := range g.SlowTraces {
		gj.SlowTraces = append(gj.SlowTraces, SlowTrace{TraceID: s.TraceID.String(), Latency: Duration(s.Latency), Task: uint64(s.Task)})
	}
	gj.TracedRequests = g.Traced
	return gj
}

// WhatIfErr returns the prediction engine's refusal of a what-if (a model
// spec that a request type's queueing model cannot take, say), naming the
// request type when the report has several; nil when there is none. The
// report then holds the timeline's predictions for that type.
func (r *Report) WhatIfErr() error {
	for _, g := range r.Groups {
		if g.whatIfErr == nil {
			continue
		}
		if len(r.Groups) > 1 {
			return fmt.Errorf("request type %q: %w (--task NAME evaluates one type)", g.Name, g.whatIfErr)
		}
		return g.whatIfErr
	}
	return nil
}

// predictions are g's what-ifs: by the one engine when in.Specs is set
// (whatif.Evaluate), else the timeline simulation's with tp's caps. An
// engine's refusal is returned beside the timeline's predictions.
func predictions(res *budget.Result, g *budget.Group, in Inputs, tp budget.Throughput, cpu time.Duration) ([]Prediction, error) {
	out := []Prediction{}
	var err error
	if len(in.Specs) > 0 {
		eres := res
		if in.Demands != nil {
			eres = in.Demands
		}
		var ev *whatif.Evaluation
		ev, err = whatif.Evaluate(eres, g.Name, whatif.Inputs{Clients: in.Clients, Cores: in.Cores, Pools: in.Pools, Workers: in.Workers, CPU: cpu, ClientsInProcess: in.ClientsInProcess}, in.Specs)
		if err == nil {
			for _, o := range ev.Outcomes {
				out = append(out, outcomeJSON(o, g.Latency.Mean))
			}
			return out, nil
		}
	}
	for _, p := range g.Predictions {
		out = append(out, predictionJSON(g.Cap(res, tp, p)))
	}
	return out, err
}

// onPath reports whether re matches a frame on the term's call path.
func onPath(re *regexp.Regexp, t budget.Term) bool {
	if re.MatchString(t.Frame) {
		return true
	}
	for _, f := range t.Path {
		if re.MatchString(f) {
			return true
		}
	}
	return false
}

func termJSON(t budget.Term, label string, ts budget.TermStat, n, mean float64) Term {
	path := t.Path
	if path == nil && t.Frame != "" {
		path = []string{t.Frame}
	}
	if path == nil {
		path = []string{}
	}
	tj := Term{Name: label, Frame: t.Frame, AppPath: path, Mechanism: t.Mechanism, Kind: t.Kind.String(), Beneath: t.Beneath,
		Wait: durOf(float64(ts.Wait) / n), Critical: durOf(float64(ts.Critical) / n),
		FixPotential: durOf(float64(ts.Fix) / n), Along: durOf(float64(ts.Along) / n), Contention: durOf(float64(ts.Contention) / n), Requests: ts.Requests}
	if mean > 0 {
		tj.SharePct = units.Round3(100 * float64(ts.Wait) / n / mean)
		tj.CriticalPct = units.Round3(100 * float64(ts.Critical) / n / mean)
	}
	for k, v := range ts.Causes {
		if v > 0 {
			if tj.Causes == nil {
				tj.Causes = map[string]Duration{}
			}
			tj.Causes[frame.Kind(k).String()] = durOf(float64(v) / n)
		}
	}
	for _, rc := range ts.Roots {
		path := rc.Path
		if path == nil {
			path = []string{rc.Frame}
		}
		tj.RootCauses = append(tj.RootCauses, RootCause{Name: rc.Name(), Frame: rc.Frame, AppPath: path, Mechanism: rc.Mechanism,
			Kind: rc.Kind.String(), Critical: durOf(float64(rc.Critical) / n), Hops: rc.Hops})
	}
	return tj
}

func coverageJSON(c budget.Coverage) Coverage {
	cj := Coverage{WaitSumPct: units.Round3(100 * c.WaitSum), GoroutineSumPct: units.Round3(100 * c.GoroutineSum),
		CriticalPct: units.Round3(100 * c.Critical), Unknown: Duration(c.Unknown)}
	if c.HasIndependent {
		pct := units.Round3(100 * c.Independent)
		cj.IndependentPct, cj.Unexplained = &pct, durPtr(Duration(c.Unexplained))
	}
	return cj
}

func regionsJSON(g *budget.Group, n float64) []Region {
	var wall float64
	samples := 0
	for _, r := range g.Regions {
		wall += float64(r.Wall)
		samples += r.CPUSamples
	}
	out := []Region{}
	for _, r := range g.Regions {
		rj := Region{Name: r.Name, Wall: durOf(float64(r.Wall) / n), CPUSamples: r.CPUSamples}
		if wall > 0 {
			rj.WallPct = units.Round3(100 * float64(r.Wall) / wall)
		}
		if samples > 0 {
			rj.CPUPct = units.Round3(100 * float64(r.CPUSamples) / float64(samples))
		}
		out = append(out, rj)
	}
	return out
}

func pathJSON(res *budget.Result, labels []string, p *budget.Path) *Path {
	if p == nil {
		return nil
	}
	pj := &Path{Task: uint64(p.Task), Latency: Duration(p.Latency), Goroutines: p.Goroutines, Segments: []Segment{}}
	if !p.TraceID.IsZero() {
		pj.TraceID = p.TraceID.String()
	}
	for _, s := range mergeSegs(p.Segs) {
		sj := Segment{Start: Duration(s.Start - p.Begin), Dur: Duration(s.Dur()), Goroutine: int64(s.G),
			Kind: s.Kind.String(), Borrowed: s.Borrowed, Contention: s.Contention, Unknown: s.Unknown}
		switch {
		case s.Term != critpath.NoTerm:
			sj.Term = res.Terms[s.Term].NamedAs(labels[s.Term])
		case s.From != critpath.CPUNone: // the frame it ran in
			sj.Term = res.Terms[s.CPU].NamedAs(labels[s.CPU])
		}
		if s.Borrowed {
			if rc, ok := res.Cause(s.Cause, s.Kind); ok {
				sj.Cause = rc.Name()
			}
			for _, h := range s.Via[:s.Hops] {
				sj.Via = append(sj.Via, Hop{Goroutine: int64(h.G), Kind: h.Kind.String()})
			}
		}
		pj.Segments = append(pj.Segments, sj)
	}
	return pj
}

// mergeSegs joins adjacent pieces that say the same thing.
func mergeSegs(segs []critpath.PathSeg) []critpath.PathSeg {
	var out []critpath.PathSeg
	for _, s := range segs {
		if n := len(out); n > 0 {
			l := &out[n-1]
			if l.G == s.G && l.Kind == s.Kind && l.Term == s.Term && l.CPU == s.CPU && l.From == s.From && l.Borrowed == s.Borrowed && l.Contention == s.Contention && l.Unknown == s.Unknown && l.End == s.Start &&
				l.Cause == s.Cause && l.Via == s.Via && l.Hops == s.Hops {
				l.End = s.End
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// stddev is the sample standard deviation of xs around mean.
func stddev(xs []int64, mean float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		d := float64(x) - mean
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
