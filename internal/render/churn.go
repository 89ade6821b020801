package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/sched"
)

// churnOf returns a JVM recording's scheduler-churn analysis
// (jfr.ChurnReport, docs/jfr-churn.md) among res's warnings, or nil. The
// JVM analyser adds it there; Build makes it the report's Sched (JSON
// "sched", with "kind": "jvm-churn") and lists its findings, and WriteText
// prints it after the budget, as the scheduler section of a Go trace is
// printed.
func churnOf(res *budget.Result) *jfr.ChurnReport {
	for _, w := range res.Warnings {
		var cr *jfr.ChurnReport
		if errors.As(w, &cr) {
			return cr
		}
	}
	return nil
}

// addChurn makes a JVM recording's churn analysis the report's scheduler
// section and adds its findings, with the kinds of package sched.
func addChurn(res *budget.Result, rep *Report) {
	cs := churnOf(res)
	if cs == nil {
		return
	}
	rep.Sched = cs
	for _, f := range cs.Findings() {
		if f.Kind == sched.FindNoSamples {
			continue // said once, in the churn section (as for a Go trace)
		}
		rep.Findings = append(rep.Findings, Finding{Kind: f.Kind.String(), Text: f.Error()})
	}
}

// writeChurn prints the churn section of a JVM recording, when it has one.
func (r *Report) writeChurn(ew *errWriter) {
	cr, ok := r.Sched.(*jfr.ChurnReport)
	if !ok {
		return
	}
	var b strings.Builder
	if err := WriteChurnText(&b, cr); err != nil {
		ew.err = err
		return
	}
	// The section's writer escaped what it printed; its newlines are its own.
	fmt.Fprintf(ew, "\nscheduler churn (the JVM's pool threads, from JFR execution samples and parks):\n%s\n", strings.TrimRight(b.String(), "\n"))
}
