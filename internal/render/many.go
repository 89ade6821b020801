package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/quantile"
	"github.com/latscope/latscope/internal/sketch"
)

// Many is the report of several traces analysed together (analyze with
// several traces or a directory of snapshots): their requests aggregated
// by request type over every trace, with a row per instance. Each trace
// was analysed on its own; what does not add across traces (predictions,
// the CPU cross-check, refusals) stays with its trace in Traces.
type Many struct {
	Traces []ManyTrace `json:"traces"`
	// Instances are the instances' names, sorted.
	Instances []string    `json:"instances"`
	Groups    []ManyGroup `json:"groups"`
	// Findings are about the aggregate (instances named by file name,
	// estimated percentiles, overlapping windows of one instance).
	Findings []Finding `json:"findings"`
	minShare float64
}

// ManyTrace is one trace of a Many report.
type ManyTrace struct {
	File     string `json:"file"`
	Instance string `json:"instance"`
	// InstanceFrom says where Instance came from: "log" (the agent's
	// instance log in the trace) or "file" (the file's name, for a trace
	// without the log).
	InstanceFrom string   `json:"instance_from"`
	StartWall    string   `json:"start_wall,omitempty"`
	Duration     Duration `json:"duration_ms"`
	Requests     int      `json:"requests"`
	// Findings are the trace's own findings, as analyze prints them for
	// the trace alone.
	Findings []Finding `json:"findings"`
}

// ManyGroup is one request type over every trace.
type ManyGroup struct {
	Name     string       `json:"name"`
	Requests ManyRequests `json:"requests"`
	// Terms are the budget rows over every trace: sums divided by the
	// group's requests, so per request, like Group.Terms. A term is the
	// same in two traces when its call path, mechanism and kind are.
	Terms []Term `json:"terms"`
	// CPUTerms split the running time by frame over every trace, per
	// request, like Group.CPUTerms.
	CPUTerms []Term `json:"cpu_terms"`
	// CPU is running and runnable time per request (no independent counter:
	// that cross-check is per trace).
	CPU       CPU           `json:"cpu"`
	Instances []InstanceRow `json:"instances"`
}

// ManyRequests summarises a group's latencies over every trace. Count,
// Mean, Min and Max are exact; the percentiles too unless Estimated.
type ManyRequests struct {
	Count    int      `json:"count"`
	Excluded int      `json:"excluded"`
	Mean     Duration `json:"mean_ms"`
	Min      Duration `json:"min_ms"`
	P50      Duration `json:"p50_ms"`
	P90      Duration `json:"p90_ms"`
	P99      Duration `json:"p99_ms"`
	Max      Duration `json:"max_ms"`
	// Estimated: there were more requests than ManyOptions.MaxExact, and
	// the percentiles come from a sketch, within EstimateRelErr.
	Estimated bool `json:"percentiles_estimated"`
}

// EstimateRelErr is the relative accuracy of estimated percentiles.
const EstimateRelErr = sketch.RelErr

// InstanceRow is one instance's requests of a group.
type InstanceRow struct {
	Instance string   `json:"instance"`
	Traces   int      `json:"traces"`
	Requests int      `json:"requests"`
	Mean     Duration `json:"mean_ms"`
	// P99 is exact, or estimated as the group's percentiles are.
	P99 Duration `json:"p99_ms"`
	Max Duration `json:"max_ms"`
	// TopTerm is the term with the most critical time in this instance's
	// requests ("" when none), TopCritical that time per request.
	TopTerm     string   `json:"top_term,omitempty"`
	TopCritical Duration `json:"top_term_critical_ms"`
}

// ManyOptions configure a ManyBuilder.
type ManyOptions struct {
	// MaxExact is the most latencies of a request type kept to compute
	// exact percentiles; beyond it they come from a sketch. 0 is
	// DefaultMaxExact.
	MaxExact int
	// Task keeps only this request type; "" keeps all.
	Task string
	// MinShare folds small terms in text output, as Inputs.MinShare.
	MinShare float64
}

// DefaultMaxExact keeps up to 2 MiB of latencies per request type.
const DefaultMaxExact = 1 << 18

// ManyBuilder aggregates the analyses of traces added one at a time; it
// keeps per request type only sums, per-term and per-instance totals, and
// latencies up to MaxExact (then a sketch), never a trace's result.
type ManyBuilder struct {
	opts    ManyOptions
	traces  []ManyTrace
	windows map[string][]window // per instance, for overlaps
	terms   []budget.Term       // the merged term table
	termIdx map[string]int
	groups  map[string]*manyGroup
	names   map[string]bool // every request type seen, for a Task that matches none
}

// window is a trace's wall-clock span.
type window struct {
	file       string
	start, end time.Time
}

type manyGroup struct {
	name            string
	count, excluded int
	sum             int64
	kept            int  // latencies kept exactly, in the instances' exact
	dropped         bool // they would exceed MaxExact: the sketches serve
	sk              sketch.Sketch
	terms           map[int]*budget.TermStat // by merged term
	cpuTerms        map[int]*budget.TermStat // by merged term
	byFrame         budget.CPUByFrame
	running         budget.TimeStat
	runnable        budget.TimeStat
	inst            map[string]*instAgg
}

type instAgg struct {
	traces, count int
	sum, max      int64
	exact         []int64 // the latencies, until the group drops them
	sk            sketch.Sketch
	crit          map[int]int64 // critical time by merged term
}

// NewManyBuilder returns an empty builder.
func NewManyBuilder(o ManyOptions) *ManyBuilder {
	if o.MaxExact <= 0 {
		o.MaxExact = DefaultMaxExact
	}
	return &ManyBuilder{opts: o, windows: map[string][]window{}, termIdx: map[string]int{}, groups: map[string]*manyGroup{}, names: map[string]bool{}}
}

// TraceSource says where a trace's instance name came from.
type TraceSource struct {
	File     string
	Instance string
	FromLog  bool // the agent's instance log; else the file name
}

// Add aggregates one trace's analysis and its report (built by Build with
// no Task or Frame filter). Neither is kept.
func (b *ManyBuilder) Add(src TraceSource, res *budget.Result, rep *Report) {
	t := ManyTrace{File: src.File, Instance: src.Instance, InstanceFrom: "file", StartWall: rep.Trace.StartWall,
		Duration: rep.Trace.Duration, Findings: slices.Clone(rep.Findings)}
	if src.FromLog {
		t.InstanceFrom = "log"
	}
	if t.Findings == nil {
		t.Findings = []Finding{}
	}
	merged := make([]int, len(res.Terms))
	for i, term := range res.Terms {
		merged[i] = b.term(term)
	}
	for _, g := range res.Groups {
		t.Requests += g.Count
		b.names[g.Name] = true
		if b.opts.Task == "" || g.Name == b.opts.Task {
			b.group(g.Name).add(src.Instance, g, merged, b.opts.MaxExact)
		}
	}
	if !res.Info.StartWall.IsZero() {
		w := window{src.File, res.Info.StartWall, res.Info.StartWall.Add(time.Duration(res.Info.Duration()))}
		b.windows[src.Instance] = append(b.windows[src.Instance], w)
	}
	b.traces = append(b.traces, t)
}

// term returns the merged index of a trace's term.
func (b *ManyBuilder) term(t budget.Term) int {
	key := strings.Join(t.Path, "\x00") + "\x01" + t.Frame + "\x01" + t.Mechanism + "\x01" + t.Kind.String()
	if t.Beneath {
		key += "\x01beneath"
	}
	i, ok := b.termIdx[key]
	if !ok {
		i = len(b.terms)
		b.terms = append(b.terms, t)
		b.termIdx[key] = i
	}
	return i
}

func (b *ManyBuilder) group(name string) *manyGroup {
	g := b.groups[name]
	if g == nil {
		g = &manyGroup{name: name, terms: map[int]*budget.TermStat{}, cpuTerms: map[int]*budget.TermStat{}, inst: map[string]*instAgg{}}
		b.groups[name] = g
	}
	return g
}

// add aggregates a trace's group g of instance inst; merged maps the
// trace's term IDs to the merged table.
func (mg *manyGroup) add(inst string, g *budget.Group, merged []int, maxExact int) {
	ia := mg.inst[inst]
	if ia == nil {
		ia = &instAgg{crit: map[int]int64{}}
		mg.inst[inst] = ia
	}
	ia.traces++
	mg.count += g.Count
	mg.excluded += g.Excluded()
	ia.count += g.Count
	for _, l := range g.Latencies {
		mg.sum += l
		ia.sum += l
		ia.max = max(ia.max, l)
		mg.sk.Add(l)
		ia.sk.Add(l)
	}
	if !mg.dropped && mg.kept+len(g.Latencies) <= maxExact {
		ia.exact = append(ia.exact, g.Latencies...)
		mg.kept += len(g.Latencies)
	} else if !mg.dropped {
		mg.dropped = true
		for _, other := range mg.inst {
			other.exact = nil
		}
	}
	for _, x := range []struct {
		from []budget.TermStat
		to   map[int]*budget.TermStat
	}{{g.Terms, mg.terms}, {g.CPUTerms, mg.cpuTerms}} {
		for _, ts := range x.from {
			m := merged[ts.Term]
			s := x.to[m]
			if s == nil {
				s = &budget.TermStat{Term: critpath.TermID(m)}
				x.to[m] = s
			}
			s.Wait += ts.Wait
			s.Critical += ts.Critical
			s.Fix += ts.Fix
			s.Contention += ts.Contention
			s.Requests += ts.Requests
			for k := range s.Causes {
				s.Causes[k] += ts.Causes[k]
			}
			ia.crit[m] += ts.Critical
		}
	}
	mg.byFrame.FromSamples += g.CPUByFrame.FromSamples
	mg.byFrame.FromStacks += g.CPUByFrame.FromStacks
	mg.byFrame.Critical += g.CPUByFrame.Critical
	mg.running.Wait += g.Running.Wait
	mg.running.Critical += g.Running.Critical
	mg.runnable.Wait += g.Runnable.Wait
	mg.runnable.Critical += g.Runnable.Critical
}

// Finalize returns the aggregate report. It fails, naming the request
// types seen, when ManyOptions.Task matched none; a builder with no trace
// returns an empty report.
func (b *ManyBuilder) Finalize() (*Many, error) {
	m := &Many{Traces: b.traces, Instances: []string{}, Groups: []ManyGroup{}, Findings: []Finding{}, minShare: b.opts.MinShare}
	if m.Traces == nil {
		m.Traces = []ManyTrace{}
	}
	if b.opts.Task != "" && len(b.groups) == 0 && len(b.traces) > 0 {
		names := slices.Sorted(maps.Keys(b.names))
		if len(names) == 0 {
			return nil, opterr.Wrap("task", fmt.Errorf("%q %w: none of the %d traces has requests", b.opts.Task, ErrNoMatch, len(b.traces)))
		}
		return nil, opterr.Wrap("task", fmt.Errorf("%q %w in any of the %d traces (request types: %s)%s", b.opts.Task, ErrNoMatch, len(b.traces), strings.Join(names, ", "), closest(b.opts.Task, names)))
	}
	seen := map[string]bool{}
	for _, t := range b.traces {
		if !seen[t.Instance] {
			seen[t.Instance] = true
			m.Instances = append(m.Instances, t.Instance)
		}
	}
	slices.Sort(m.Instances)
	labels := budget.Labels(b.terms)
	for _, name := range slices.Sorted(maps.Keys(b.groups)) { // in order, for the findings' order
		m.Groups = append(m.Groups, b.groups[name].final(b.terms, labels, b.opts.MaxExact, m))
	}
	slices.SortFunc(m.Groups, func(x, y ManyGroup) int {
		if x.Requests.Count != y.Requests.Count {
			return y.Requests.Count - x.Requests.Count
		}
		return strings.Compare(x.Name, y.Name)
	})
	m.Findings = append(m.Findings, b.notes()...)
	return m, nil
}

// final derives the report's group from the aggregate.
func (mg *manyGroup) final(terms []budget.Term, labels []string, maxExact int, m *Many) ManyGroup {
	n := float64(max(mg.count, 1))
	mean := float64(mg.sum) / n
	q := ManyRequests{Count: mg.count, Excluded: mg.excluded, Mean: durOf(mean), Min: Duration(mg.sk.Min()), Max: Duration(mg.sk.Max())}
	if mg.dropped {
		q.Estimated = true
		q.P50, q.P90, q.P99 = Duration(mg.sk.Quantile(0.5)), Duration(mg.sk.Quantile(0.9)), Duration(mg.sk.Quantile(0.99))
		m.Findings = append(m.Findings, Finding{Kind: "percentiles-estimated", Group: mg.name, Text: fmt.Sprintf(
			"%s: %d requests, more than the %d kept exactly: p50, p90 and p99 are estimates within %.1f %% (count, mean, min and max are exact)",
			mg.name, mg.count, maxExact, 100*EstimateRelErr)})
	} else {
		all := make([]int64, 0, mg.kept)
		for _, ia := range mg.inst {
			all = append(all, ia.exact...)
		}
		slices.Sort(all)
		q.P50, q.P90, q.P99 = Duration(quantile.Sorted(all, 0.5)), Duration(quantile.Sorted(all, 0.9)), Duration(quantile.Sorted(all, 0.99))
	}
	g := ManyGroup{Name: mg.name, Requests: q, Instances: []InstanceRow{}}
	g.Terms = manyTerms(mg.terms, terms, labels, n, mean)
	g.CPUTerms = manyTerms(mg.cpuTerms, terms, labels, n, mean)
	per := func(ns int64) Duration { return durOf(float64(ns) / n) }
	g.CPU = CPU{Running: per(mg.running.Wait), Runnable: per(mg.runnable.Wait), CriticalRunning: per(mg.running.Critical), CriticalRunnable: per(mg.runnable.Critical)}
	bf := mg.byFrame
	g.CPU.ByFrame = &CPUByFrame{FromSamples: per(bf.FromSamples), FromStacks: per(bf.FromStacks),
		Unattributed:       per(mg.running.Wait - bf.FromSamples - bf.FromStacks),
		CriticalAttributed: per(bf.Critical), CriticalUnattributed: per(mg.running.Critical - bf.Critical)}
	for _, name := range m.Instances {
		if ia := mg.inst[name]; ia != nil {
			g.Instances = append(g.Instances, ia.row(name, terms, labels, mg.dropped))
		}
	}
	return g
}

// manyTerms are the rows of aggregated terms, most critical first.
func manyTerms(agg map[int]*budget.TermStat, terms []budget.Term, labels []string, n, mean float64) []Term {
	ids := make([]int, 0, len(agg))
	for id := range agg {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int) int {
		x, y := agg[a], agg[b]
		if x.Critical != y.Critical {
			return cmpDesc(x.Critical, y.Critical)
		}
		if x.Wait != y.Wait {
			return cmpDesc(x.Wait, y.Wait)
		}
		if c := strings.Compare(labels[a], labels[b]); c != 0 {
			return c
		}
		return a - b // one label for two terms: in a fixed order, not the map's
	})
	out := []Term{}
	for _, id := range ids {
		out = append(out, termJSON(terms[id], labels[id], *agg[id], n, mean))
	}
	return out
}

func cmpDesc(a, b int64) int {
	if a > b {
		return -1
	}
	return 1
}

// row is the instance's row of a group.
func (ia *instAgg) row(name string, terms []budget.Term, labels []string, estimated bool) InstanceRow {
	r := InstanceRow{Instance: name, Traces: ia.traces, Requests: ia.count, Max: Duration(ia.max)}
	if ia.count == 0 {
		return r
	}
	r.Mean = durOf(float64(ia.sum) / float64(ia.count))
	if estimated {
		r.P99 = Duration(ia.sk.Quantile(0.99))
	} else {
		slices.Sort(ia.exact)
		r.P99 = Duration(quantile.Sorted(ia.exact, 0.99))
	}
	top, best := -1, int64(0)
	for id, c := range ia.crit {
		if c > best || (c == best && top >= 0 && c > 0 && labels[id] < labels[top]) {
			top, best = id, c
		}
	}
	if top >= 0 {
		r.TopTerm = nameOr(labels[top], termName(terms[top].Frame))
		r.TopCritical = durOf(float64(best) / float64(ia.count))
	}
	return r
}

// maxListed bounds the files a finding lists.
const maxListed = 5

// notes are the aggregate's findings about its inputs.
func (b *ManyBuilder) notes() []Finding {
	var out []Finding
	var byFile []string
	for _, t := range b.traces {
		if t.InstanceFrom == "file" {
			byFile = append(byFile, t.File)
		}
	}
	if len(byFile) > 0 {
		list := strings.Join(byFile[:min(len(byFile), maxListed)], ", ")
		if len(byFile) > maxListed {
			list += fmt.Sprintf(" and %d more", len(byFile)-maxListed)
		}
		out = append(out, Finding{Kind: "instance-from-file", Text: fmt.Sprintf(
			"%d of %d traces hold no instance log (taken by an agent with Options.Instance \"-\", by an older one, or without the agent): each is labelled by its file name (%s)",
			len(byFile), len(b.traces), list)})
	}
	insts := make([]string, 0, len(b.windows))
	for inst := range b.windows {
		insts = append(insts, inst)
	}
	slices.Sort(insts)
	for _, inst := range insts {
		out = append(out, overlaps(inst, b.windows[inst])...)
	}
	return out
}

// overlaps finds traces of one instance whose windows overlap: requests in
// the overlap are counted once per trace.
func overlaps(inst string, ws []window) []Finding {
	ws = slices.Clone(ws)
	slices.SortFunc(ws, func(a, b window) int { return a.start.Compare(b.start) })
	var out []Finding
	for i := 1; i < len(ws); i++ {
		prev, w := ws[i-1], ws[i]
		if d := prev.end.Sub(w.start); d > 0 {
			out = append(out, Finding{Kind: "windows-overlap", Text: fmt.Sprintf(
				"instance %s: %s and %s overlap by %.2f s (flight-recorder windows of one process): requests that ended in the overlap are counted in both",
				inst, prev.file, w.file, min(d, w.end.Sub(w.start)).Seconds())})
		}
	}
	return out
}
