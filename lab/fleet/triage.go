package fleet

import (
	"bytes"
	"context"

	"github.com/latscope/latscope/internal/report/triagereport"
	"github.com/latscope/latscope/internal/triage"
)

// Triage runs triage.Run for q: the TriageFunc of the lab. The files are
// triage's text and JSON reports.
func Triage(ctx context.Context, q Query) (*VerdictOut, map[string][]byte, error) {
	rep, err := triage.Run(ctx, triage.Config{URL: q.URL, Job: q.Job, Start: q.Start, End: q.End, Step: q.Step, Threshold: q.Threshold, Signal: q.Signal, Route: q.Route})
	if err != nil {
		return nil, nil, err
	}
	var text, js bytes.Buffer
	if err := triagereport.WriteText(&text, rep); err != nil {
		return nil, nil, err
	}
	if err := triagereport.WriteJSON(&js, rep); err != nil {
		return nil, nil, err
	}
	return verdictOf(rep), map[string][]byte{"triage.txt": text.Bytes(), "triage.json": js.Bytes()}, nil
}

// verdictOf copies what the lab checks and prints out of a report.
func verdictOf(rep *triage.Report) *VerdictOut {
	v := rep.Verdict
	out := &VerdictOut{Scope: v.Scope, Instance: v.Instance, DBPath: v.DBPath, Period: v.Period, Cause: v.Cause,
		Dependency: v.Dependency.String(), Route: v.Route, Rule: v.Rule, Quantile: rep.Quantile, Line: v.Line, Next: v.Next,
		BadSteps: map[string][]int{}, Warnings: rep.Warnings}
	for _, ir := range rep.Instances {
		out.BadSteps[ir.Name] = ir.Bad
	}
	return out
}
