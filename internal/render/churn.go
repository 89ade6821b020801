package render

import (
	"fmt"
	"strings"

	"github.com/latscope/latscope/internal/sched"
)

// AddChurn makes a JVM recording's scheduler-churn analysis
// (sched.JVMReport, docs/jfr-churn.md) the report's scheduler section (JSON
// "sched", with "kind": "jvm-churn") and adds its findings, with the kinds
// of package sched, after the budget's: as a Go trace's scheduler report
// joins its report (package pipeline). WriteText prints it after the
// budget. A nil c adds nothing.
func AddChurn(rep *Report, c *sched.JVMReport) {
	if c == nil {
		return
	}
	rep.Sched = c
	for _, f := range c.Findings() {
		if f.Kind == sched.FindNoSamples {
			continue // said once, in the churn section (as for a Go trace)
		}
		rep.Findings = append(rep.Findings, Finding{Kind: f.Kind.String(), Text: f.Error()})
	}
}

// writeChurn prints the churn section of a JVM recording, when it has one.
func (r *Report) writeChurn(ew *errWriter) {
	cr, ok := r.Sched.(*sched.JVMReport)
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
