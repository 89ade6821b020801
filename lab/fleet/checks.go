package fleet

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/latscope/latscope/lab"
)

// check compares triage's verdict over one phase with the phase's truth:
// the scope (none, local, shared) always; the instance, the DB path, the
// dependency (and its route), the period (none for a continuous fault),
// the cause, the rule of rule 1 and the lower percentile of a thin route
// where the truth has one. names maps Prometheus
// instance labels to the lab's instance names. A phase whose triage failed
// gets one failed check saying why.
func check(p *PhaseResult, names map[string]string, minute time.Duration) []lab.Check {
	pre := p.Name + "/" + p.Signal + ": "
	if p.Verdict == nil {
		return []lab.Check{{Name: pre + "triage ran", Want: "a verdict", Got: p.Error}}
	}
	v, t := p.Verdict, p.Truth
	cs := []lab.Check{eq(pre+"scope", t.Scope, v.Scope)}
	if t.Scope == "local" {
		cs = append(cs, eq(pre+"instance", name(names, t.Instance), name(names, v.Instance)))
	}
	if t.DBPath != "" {
		cs = append(cs, eq(pre+"DB path", t.DBPath, v.DBPath))
	}
	if t.Period > 0 || t.Continuous {
		cs = append(cs, lab.Check{Name: pre + "period", Want: periodText(t.Period, minute), Got: periodText(v.Period, minute), OK: v.Period == t.Period})
	}
	if t.Dependency != "" {
		cs = append(cs, eq(pre+"dependency", t.Dependency, v.Dependency))
	}
	if t.Route != "" {
		cs = append(cs, eq(pre+"route", t.Route, v.Route))
	}
	if t.Cause != "" {
		cs = append(cs, eq(pre+"host evidence", t.Cause, v.Cause))
	}
	if t.Rule != "" {
		cs = append(cs, lab.Check{Name: pre + "rule", Want: "includes " + t.Rule, Got: orNone(v.Rule), OK: slices.Contains(strings.Split(v.Rule, "+"), t.Rule)})
	}
	if t.Thin {
		own := signalQuantile(p.Signal)
		cs = append(cs, lab.Check{Name: pre + "percentile", Want: "below " + quantileText(own) + " (too few requests per step)", Got: quantileText(v.Quantile), OK: v.Quantile > 0 && v.Quantile < own})
	}
	if len(p.Faults) > 0 {
		cs = append(cs, minutesCheck(pre, p, names, minute))
	}
	return cs
}

// signalQuantile is the signal's own percentile: the request p99, the
// DB-call p95.
func signalQuantile(signal string) float64 {
	if signal == "request" {
		return 0.99
	}
	return 0.95
}

// quantileText is a quantile as a percentile ("p75").
func quantileText(q float64) string { return fmt.Sprintf("p%g", 100*q) }

// orNone is s, or "(none)".
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// minutesCheck: the bad minutes triage found lie in the faults' minutes —
// of the faulted instance when the truth is local, of every instance when
// it is shared. A fault's minutes run from the one it starts in to the one
// after it ends: Prometheus stamps a sample with the time its scrape
// started, and the scrape after a fault may end a minute later.
func minutesCheck(pre string, p *PhaseResult, names map[string]string, minute time.Duration) lab.Check {
	in := func(step int) bool {
		for _, f := range p.Faults {
			if int(f.From.Sub(p.Start)/minute) <= step && step <= int(f.To.Sub(p.Start)/minute)+1 {
				return true
			}
		}
		return false
	}
	var want, got, outside []string
	for _, f := range p.Faults {
		want = append(want, fmt.Sprintf("%d–%d", int(f.From.Sub(p.Start)/minute), int(f.To.Sub(p.Start)/minute)+1))
	}
	for _, inst := range sortedKeys(p.Verdict.BadSteps, names) {
		if p.Truth.Scope == "local" && inst != p.Truth.Instance {
			continue
		}
		for _, s := range p.Verdict.BadSteps[inst] {
			got = append(got, fmt.Sprintf("%s:%d", name(names, inst), s))
			if !in(s) {
				outside = append(outside, fmt.Sprintf("%s:%d", name(names, inst), s))
			}
		}
	}
	c := lab.Check{Name: pre + "bad minutes", Want: "within " + strings.Join(want, ", "), Got: strings.Join(got, " "), OK: len(got) > 0 && len(outside) == 0}
	if len(got) == 0 {
		c.Got = "none"
	}
	return c
}

// sortedKeys returns m's keys in the order of their names.
func sortedKeys(m map[string][]int, names map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return name(names, keys[i]) < name(names, keys[j]) })
	return keys
}

// eq is a check that got equals want.
func eq(name, want, got string) lab.Check {
	if got == "" {
		got = "(none)"
	}
	return lab.Check{Name: name, Want: want, Got: got, OK: got == want}
}

// name is the lab's name of a Prometheus instance label.
func name(names map[string]string, instance string) string {
	if n, ok := names[instance]; ok {
		return n
	}
	return instance
}

// periodText is a period in minutes and seconds ("4 min (12s)"), or "none".
func periodText(d, minute time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return fmt.Sprintf("%g min (%v)", float64(d)/float64(minute), d)
}
