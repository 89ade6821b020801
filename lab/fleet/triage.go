package fleet

import (
	"context"
	"strings"

	"github.com/latscope/latscope/triage"
)

// Triage runs triage.Run for q: the TriageFunc of the lab.
func Triage(ctx context.Context, q Query) (*VerdictOut, string, error) {
	rep, err := triage.Run(ctx, triage.Config{URL: q.URL, Job: q.Job, Start: q.Start, End: q.End, Step: q.Step, Threshold: q.Threshold, Signal: q.Signal})
	if err != nil {
		return nil, "", err
	}
	var text strings.Builder
	triage.WriteText(&text, rep)
	return verdictOf(rep), text.String(), nil
}

// verdictOf copies what the lab checks and prints out of a report.
func verdictOf(rep *triage.Report) *VerdictOut {
	v := rep.Verdict
	out := &VerdictOut{Scope: v.Scope, Instance: v.Instance, DBPath: v.DBPath, Period: v.Period, Cause: v.Cause, Line: v.Line, Next: v.Next,
		BadSteps: map[string][]int{}, Warnings: rep.Warnings}
	for _, ir := range rep.Instances {
		out.BadSteps[ir.Name] = ir.Bad
	}
	return out
}
