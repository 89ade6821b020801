package fleet

import (
	"fmt"
	"time"

	"github.com/latscope/latscope/lab"
)

// check compares triage's verdict over one phase with the phase's truth:
// the scope (none, local, shared) always; the instance, the DB path, the
// period and the cause where the truth has one. names maps Prometheus
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
	if t.Period > 0 {
		cs = append(cs, lab.Check{Name: pre + "period", Want: periodText(t.Period, minute), Got: periodText(v.Period, minute), OK: v.Period == t.Period})
	}
	if t.Cause != "" {
		cs = append(cs, eq(pre+"host evidence", t.Cause, v.Cause))
	}
	return cs
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
