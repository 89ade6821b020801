package htmlreport

import (
	"fmt"
	"sort"
	"strings"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/render"
)

const (
	colorFolded = "#9aa5b1"
	colorWaitLg = "#7d8a96"
	colorCritLg = "#34404c"
)

// budgetSection draws goroutine time against critical-path time per term.
func budgetSection(g *render.Group, opts Options) Section {
	mean := g.Requests.Mean.Ms()
	rows, kinds := budgetRows(g, opts)
	w := wordsOf(opts)
	if opts.jvm && hasPaths(g) {
		w = jvmRequestWords
	}
	chart := BarChart{
		Label: "latency budget per request", Unit: "ms per request (mean over " + plural(g.Requests.Count, "request") + ")",
		Series: []Series{{Name: w.unit + " time (wait sum over the request's " + w.unit + "s)", Color: colorWaitLg, Light: true},
			{Name: w.critical, Color: colorCritLg}},
		Rows:  rows,
		Marks: []Mark{{Value: mean, Label: "mean latency " + fmtMs(mean), Color: colorMarkP50}},
	}
	var b body
	b.lead(budgetLead(g, opts)...)
	var items []legendItem
	for _, k := range kinds {
		items = append(items, legendItem{color: KindColor(k), name: k})
	}
	b.legend(items)
	b.raw(chart.SVG())
	b.p("note", coverageNote(g, opts))
	if t, err := termsTable(g, w).HTML(); err == nil {
		b.details("all terms as a table", t)
	}
	return Section{Title: "Latency budget", Body: b.html(), Intro: w.budgetIntro}
}

func budgetRows(g *render.Group, opts Options) ([]BarRow, []string) {
	mean := g.Requests.Mean.Ms()
	var rows []BarRow
	seen := map[string]bool{}
	var kinds []string
	addKind := func(k string) {
		if !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	var folded render.Term
	nFolded := 0
	for _, t := range g.BudgetTerms() {
		if len(rows) >= opts.MaxTerms || t.SharePct < opts.MinShare && t.CriticalPct < opts.MinShare {
			folded.Wait += t.Wait
			folded.Critical += t.Critical
			nFolded++
			continue
		}
		c := KindColor(t.Kind)
		addKind(t.Kind)
		rows = append(rows, BarRow{Label: termLabel(t), Note: termNote(t), Values: []float64{t.Wait.Ms(), t.Critical.Ms()},
			Colors: []string{c, c}, Texts: []string{withPct(t.Wait.Ms(), mean), withPct(t.Critical.Ms(), mean)}, Tip: termTip(t, g.Requests.Count, wordsOf(opts))})
	}
	if nFolded > 0 {
		rows = append(rows, BarRow{Label: fmt.Sprintf("(%d smaller terms)", nFolded), Note: "each under " + fmtPct(opts.MinShare) + " of the mean",
			Values: []float64{folded.Wait.Ms(), folded.Critical.Ms()}, Colors: []string{colorFolded, colorFolded},
			Texts: []string{withPct(folded.Wait.Ms(), mean), withPct(folded.Critical.Ms(), mean)}})
	}
	if opts.jvm {
		return rows, kinds // running and runnable are not measured (jvm.go)
	}
	c := g.CPU
	run, critRun, runNote := c.Running.Ms(), c.CriticalRunning.Ms(), "on CPU, as the Go scheduler sees it"
	if bf := c.ByFrame; bf != nil && len(g.CPUTerms) > 0 {
		run, critRun, runNote = bf.Unattributed.Ms(), bf.CriticalUnattributed.Ms(), "no frame found"
	}
	rows = append(rows,
		BarRow{Label: "running", Note: runNote, Values: []float64{run, critRun},
			Colors: []string{KindColor("running"), KindColor("running")}, Texts: []string{withPct(run, mean), withPct(critRun, mean)}},
		BarRow{Label: "runnable", Note: "ready, waiting for a P (scheduler latency)", Values: []float64{c.Runnable.Ms(), c.CriticalRunnable.Ms()},
			Colors: []string{KindColor("runnable"), KindColor("runnable")}, Texts: []string{withPct(c.Runnable.Ms(), mean), withPct(c.CriticalRunnable.Ms(), mean)}})
	addKind("running")
	addKind("runnable")
	if u := g.Coverage.Unknown.Ms(); u > 0 {
		rows = append(rows, BarRow{Label: "unknown", Note: "critical-path time the timelines cannot explain", Values: []float64{0, u},
			Colors: []string{unknownColor, unknownColor}, Texts: []string{" ", withPct(u, mean)}})
		addKind("unknown")
	}
	return rows, kinds
}

// budgetLead is the sentence above the chart, naming the biggest term on
// the critical path.
func budgetLead(g *render.Group, opts Options) []string {
	if opts.jvm {
		return jvmBudgetLead(g)
	}
	mean := g.Requests.Mean.Ms()
	var top *render.Term
	terms := g.BudgetTerms()
	for i := range terms {
		if top == nil || terms[i].Critical.Ms() > top.Critical.Ms() {
			top = &terms[i]
		}
	}
	critRun, where := g.CPU.CriticalRunning.Ms(), ""
	if bf := g.CPU.ByFrame; bf != nil && len(g.CPUTerms) > 0 {
		critRun, where = bf.CriticalUnattributed.Ms(), " in no frame found"
	}
	if top == nil || top.Critical.Ms() < critRun+g.CPU.CriticalRunnable.Ms() {
		return []string{"Most of the critical path is CPU" + where + ": ", fmtMs(critRun) + " running", " and ",
			fmtMs(g.CPU.CriticalRunnable.Ms()) + " runnable", fmt.Sprintf(" of the %s mean.", fmtMs(mean))}
	}
	how := top.Kind
	if top.Mechanism != "" {
		how += " in " + frame.Short(top.Mechanism)
	}
	if top.Kind == "running" && top.Mechanism == "" {
		how = "its CPU"
		if top.Beneath {
			how = "CPU somewhere beneath it, estimated from the stacks at state changes"
		}
	}
	parts := []string{"The biggest term on the critical path is ", termLabel(*top), fmt.Sprintf(" (%s): ", how),
		fmtMs(top.Critical.Ms()) + " of the " + fmtMs(mean) + " mean", fmt.Sprintf(" (%s).", fmtPct(top.CriticalPct))}
	if top.FixPotential.Ms() > 0 {
		parts[len(parts)-1] = fmt.Sprintf(" (%s); without it a request would take about ", fmtPct(top.CriticalPct))
		parts = append(parts, fmtMs(top.FixPotential.Ms())+" less", ".")
	}
	return parts
}

func coverageNote(g *render.Group, opts Options) string {
	if opts.jvm {
		return jvmCoverageNote(g)
	}
	c := g.Coverage
	s := fmt.Sprintf("Goroutine time sums to %s of the mean latency and the critical path to %s.", fmtPct(c.GoroutineSumPct), fmtPct(c.CriticalPct))
	if g.Requests.Forked > 0 {
		s += fmt.Sprintf(" %d of %d requests fork, so goroutine time counts parallel waits more than once; the critical path counts each instant once.",
			g.Requests.Forked, g.Requests.Count)
	}
	if c.Unknown.Ms() > 0 {
		s += fmt.Sprintf(" %s per request on the critical path is not explained by the timelines.", fmtMs(c.Unknown.Ms()))
	}
	if g.CPU.Independent != nil && c.Unexplained != nil {
		s += fmt.Sprintf(" An independent CPU counter gives %s per request; critical waits + runnable + that CPU explain %s of the mean (%s unexplained).",
			fmtMs(g.CPU.Independent.Ms()), fmtPct(*c.IndependentPct), fmtMs(c.Unexplained.Ms()))
	}
	return s
}

func termsTable(g *render.Group, w words) Table {
	t := Table{Class: "compact", Columns: []Column{{Name: "term"}, {Name: "mechanism"}, {Name: "kind"},
		{Name: "wait ms", Num: true, Tip: w.unit + " time per request"}, {Name: "share", Num: true},
		{Name: "critical ms", Num: true, Tip: "on the critical path, per request"}, {Name: "critical", Num: true},
		{Name: "fix ms", Num: true, Tip: "latency saved per request if the term took no time"},
		{Name: "contention ms", Num: true, Tip: "critical time ended by another request (lock or pool held elsewhere)"},
		{Name: "requests", Num: true}, {Name: "on the path, really"}}}
	for _, tm := range g.BudgetTerms() {
		t.Rows = append(t.Rows, []Cell{{Text: termLabel(tm), Tip: strings.Join(tm.AppPath, " › "), Class: "swatch", Color: KindColor(tm.Kind)},
			{Text: mechanismText(tm), Tip: tm.Mechanism}, {Text: tm.Kind},
			{Text: fmt.Sprintf("%.3f", tm.Wait.Ms())}, {Text: fmtPct(tm.SharePct), Bar: tm.SharePct / 100},
			{Text: fmt.Sprintf("%.3f", tm.Critical.Ms())}, {Text: fmtPct(tm.CriticalPct), Bar: tm.CriticalPct / 100, Color: colorCritLg},
			{Text: fmt.Sprintf("%.3f", tm.FixPotential.Ms())}, {Text: fmt.Sprintf("%.3f", tm.Contention.Ms())},
			{Text: fmt.Sprintf("%d/%d", tm.Requests, g.Requests.Count)}, {Text: causesText(tm), Class: "muted"}})
	}
	return t
}

func termNote(t render.Term) string {
	if m := mechanismText(t); m != "" {
		return m + " · " + t.Kind
	}
	return t.Kind
}

// mechanismText is a term's mechanism as the report prints it; the CPU of
// a frame estimated from stacks ran somewhere beneath it.
func mechanismText(t render.Term) string {
	if t.Beneath {
		return budget.BeneathMechanism
	}
	return frame.Short(t.Mechanism)
}

func termTip(t render.Term, n int, w words) string {
	s := fmt.Sprintf("%s\nmechanism: %s\nkind: %s\n%s time %s per request (%s of the mean)\ncritical path %s (%s), fix potential %s\nin %d of %d requests",
		orNone(t.Frame), orNone(mechanismText(t)), t.Kind, w.unit, fmtMs(t.Wait.Ms()), fmtPct(t.SharePct), fmtMs(t.Critical.Ms()), fmtPct(t.CriticalPct), fmtMs(t.FixPotential.Ms()), t.Requests, n)
	if c := causesText(t); c != "" {
		s += "\non the path, really: " + c
	}
	return s
}

// causesText lists what the critical time of a term really was, biggest first.
func causesText(t render.Term) string {
	type kv struct {
		k string
		v float64
	}
	var cs []kv
	for k, d := range t.Causes {
		if v := d.Ms(); v > 0 {
			cs = append(cs, kv{k, v})
		}
	}
	if len(cs) == 1 && cs[0].k == t.Kind {
		return ""
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].v > cs[j].v || cs[i].v == cs[j].v && cs[i].k < cs[j].k })
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.k + " " + fmtMs(c.v)
	}
	return strings.Join(parts, ", ")
}

func shortFrame(f string) string {
	if f == "" {
		return "(no app frame)"
	}
	return frame.Short(f)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func withPct(v, mean float64) string {
	if mean <= 0 {
		return fmtMs(v)
	}
	return fmtMs(v) + " · " + fmtPct(100*v/mean)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// termLabel is a term's display name (its shortest unique call path).
func termLabel(t render.Term) string {
	if t.Name != "" {
		return t.Name
	}
	return shortFrame(t.Frame)
}
