package fleet

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	md "github.com/latscope/latscope/internal/report/markdown"

	"github.com/latscope/latscope/internal/units"
	"github.com/latscope/latscope/lab"
)

// Instance names one instance in the report.
type Instance struct {
	Name    string `json:"name"`
	Address string `json:"address"` // Prometheus's instance label
	PID     int    `json:"pid"`
}

// Result is the scenario's JSON.
type Result struct {
	Minute             time.Duration  `json:"minute_ns"`
	ThresholdMs        float64        `json:"db_p95_threshold_ms"`
	RequestThresholdMs float64        `json:"request_p99_threshold_ms"`
	Instances          []Instance     `json:"instances"`
	Phases             []*PhaseResult `json:"phases"`
	SetupS             float64        `json:"setup_s"`
	TookS              float64        `json:"took_s"`
}

// outcome is the report: the setting, a table of the phases' verdicts,
// each phase's faults and load, and the checks.
func (r *runner) outcome(phases []*PhaseResult, setup, took time.Duration) *lab.Outcome {
	c := r.cfg
	res := &Result{Minute: c.Minute, ThresholdMs: units.Ms(c.Threshold), RequestThresholdMs: units.Ms(c.RequestThreshold),
		Phases: phases, SetupS: setup.Seconds(), TookS: took.Seconds()}
	for _, m := range r.fleet {
		res.Instances = append(res.Instances, Instance{Name: m.name, Address: m.addr, PID: m.proc.PID})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A \"minute\" is **%v** here: triage ran with that step over each phase's window, against a private Prometheus scraping every 1 s. "+
		"Thresholds: DB-call p95 %v, request p99 %v. Set-up (PostgreSQL, instances, Prometheus) took %.1f s, the whole run %.1f s.\n\n",
		c.Minute, c.Threshold, c.RequestThreshold, setup.Seconds(), took.Seconds())
	insts := md.NewTable("instance", "address", "pid")
	for _, in := range res.Instances {
		insts.Row(in.Name, in.Address, strconv.Itoa(in.PID))
	}
	b.WriteString(insts.String())
	names := r.names()
	b.WriteString("\nPer phase below: the load's own view of each instance (requests, client-side p95), what Prometheus holds over the whole phase " +
		"(stall and throttled seconds from the agent's counters, failed scrapes), and the minutes triage found bad.\n")
	verdicts := md.NewTable("phase", "signal", "minutes", "truth", "triage's verdict", "checks")
	for _, p := range phases {
		verdicts.Row(p.Name, p.Signal, fmt.Sprintf("%.0f", float64(p.End.Sub(p.Start))/float64(c.Minute)),
			truthText(p.Truth, p.Signal, names, c.Minute), verdictText(p, names, c.Minute), passText(p.Checks))
	}
	b.WriteString("\n## Verdicts\n\n" + verdicts.String())
	for _, p := range phases {
		r.phaseSection(&b, p, names)
	}
	var checks []lab.Check
	for _, p := range phases {
		checks = append(checks, p.Checks...)
	}
	return &lab.Outcome{Title: "Fleet triage: which instance, shared or local, when, why", Markdown: b.String(), JSON: res, Checks: checks}
}

// phaseSection writes one phase's faults, verdict and load.
func (r *runner) phaseSection(b *strings.Builder, p *PhaseResult, names map[string]string) {
	c := r.cfg
	fmt.Fprintf(b, "\n### %s (%s)\n\n%s. Window %s – %s UTC.\n\n", p.Name, p.Signal, p.Summary, p.Start.UTC().Format("15:04:05.000"), p.End.UTC().Format("15:04:05.000"))
	for _, f := range p.Faults {
		who := "shared database"
		if f.On != "" {
			who = f.On
		}
		if f.Instance != "" {
			who = "instance " + name(names, f.Instance)
		}
		fmt.Fprintf(b, "- %s on %s: minute %.2f to %.2f", f.What, who, float64(f.From.Sub(p.Start))/float64(c.Minute), float64(f.To.Sub(p.Start))/float64(c.Minute))
		if f.Throttled > 0 {
			fmt.Fprintf(b, " (%d throttled periods)", f.Throttled)
		}
		b.WriteString("\n")
	}
	if p.Verdict != nil {
		fmt.Fprintf(b, "\nTriage (%s): %s\n", p.Took, p.Verdict.Line)
		if p.Verdict.Next != "" {
			fmt.Fprintf(b, "Next: %s\n", p.Verdict.Next)
		}
		for _, w := range p.Verdict.Warnings {
			fmt.Fprintf(b, "Warning: %s\n", w)
		}
	} else {
		fmt.Fprintf(b, "\nTriage failed: %s\n", p.Error)
	}
	fmt.Fprintf(b, "\nBy hand (while Prometheus runs: `--hold`): `%s`\n", triageCommand(p, c))
	load := md.NewTable("instance", "requests", "errors", "/db p95 ms", "/nodb p95 ms", "stall s", "throttled s", "failed scrapes", "bad minutes")
	for _, l := range p.Load {
		var bad []int
		if p.Verdict != nil {
			bad = p.Verdict.BadSteps[l.Instance]
		}
		e := p.Prom[l.Instance]
		load.Row(name(names, l.Instance), fmt.Sprint(l.Requests), fmt.Sprint(l.Errors), fmt.Sprintf("%.1f", l.DBP95Ms), fmt.Sprintf("%.1f", l.NoDBP95Ms),
			fmt.Sprintf("%.2f", e.StallS), fmt.Sprintf("%.2f", e.ThrottledS), fmt.Sprint(e.FailedScrapes), intsText(bad))
	}
	b.WriteString("\n" + load.String())
}

// truthText is the truth in one cell.
func truthText(t Truth, signal string, names map[string]string, minute time.Duration) string {
	parts := []string{t.Scope}
	if t.Instance != "" {
		parts = append(parts, name(names, t.Instance))
	}
	if t.DBPath != "" {
		parts = append(parts, t.DBPath)
	}
	if t.Period > 0 {
		parts = append(parts, "every "+periodText(t.Period, minute))
	} else if t.Continuous {
		parts = append(parts, "no period")
	}
	if t.Dependency != "" {
		d := t.Dependency
		if t.Route != "" {
			d += " " + t.Route
		}
		parts = append(parts, d)
	}
	if t.Cause != "" {
		parts = append(parts, t.Cause)
	}
	if t.Rule != "" {
		parts = append(parts, "rule "+t.Rule)
	}
	if t.Thin {
		parts = append(parts, "below "+quantileText(signalQuantile(signal)))
	}
	return strings.Join(parts, ", ")
}

// verdictText is triage's verdict in one cell, in the truth's terms.
func verdictText(p *PhaseResult, names map[string]string, minute time.Duration) string {
	if p.Verdict == nil {
		return "(failed)"
	}
	v := p.Verdict
	t := Truth{Scope: v.Scope, Instance: v.Instance, DBPath: v.DBPath, Period: v.Period, Cause: v.Cause, Route: v.Route, Continuous: p.Truth.Continuous}
	if v.Scope != "none" {
		t.Dependency = v.Dependency
	}
	s := truthText(t, p.Signal, names, minute)
	if v.Rule != "" && v.Scope != "none" {
		s += ", rule " + v.Rule
	}
	if v.Quantile > 0 && v.Quantile != signalQuantile(p.Signal) {
		s += ", " + quantileText(v.Quantile)
	}
	return s
}

// passText is "3/3 ok" or "2/3, FAIL: name".
func passText(cs []lab.Check) string {
	var failed []string
	for _, c := range cs {
		if !c.OK {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) == 0 {
		return fmt.Sprintf("%d/%d ok", len(cs), len(cs))
	}
	return fmt.Sprintf("%d/%d, FAIL: %s", len(cs)-len(failed), len(cs), strings.Join(failed, ", "))
}

// intsText lists minutes ("1 5 9"), or "–".
func intsText(xs []int) string {
	if len(xs) == 0 {
		return "–"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " ")
}

// triageCommand is the phase's triage as a latscope command line.
func triageCommand(p *PhaseResult, c Config) string {
	thr := c.Threshold
	if p.Signal == "request" {
		thr = c.RequestThreshold
	}
	cmd := fmt.Sprintf("latscope triage --prometheus %s --job %s --since %s --until %s --step %v --threshold %v --signal %s",
		p.Prometheus, Job, p.Start.UTC().Format(time.RFC3339), p.End.UTC().Format(time.RFC3339), c.Minute, thr, p.Signal)
	if p.Route != "" {
		cmd += fmt.Sprintf(" --route '%s'", p.Route)
	}
	return cmd
}
