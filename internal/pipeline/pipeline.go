// Package pipeline is the one path from a Go execution trace to a report,
// the path every command that prints an analysis takes (analyze, capture;
// the HTML and pprof writers format what it returns): one read of the
// trace (analysis.Run) feeding the latency budget and the scheduler
// analysis, a CPU profile of the same window when there is one, and the
// report (package render) with every finding merged before anything is
// written. A JVM recording's result joins the same path at FromResult.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/tracein"
)

// Options are what the pipeline needs beside the trace.
type Options struct {
	Budget budget.Options
	// Partial analyses a damaged trace up to the damage (a finding says
	// so); otherwise damage is an *analysis.DamagedError.
	Partial bool
	// CPUProfile is a pprof CPU profile of the same window, or "". Its
	// errors are opterr errors of the option "cpu".
	CPUProfile string
	// Report are the facts beside the trace the report may use.
	Report render.Inputs
}

// Report is one trace analysed: the analysis, the scheduler's, and the
// report that holds every derived number and finding.
type Report struct {
	Result *budget.Result
	Report *render.Report
	Sched  *sched.Report // nil for a JVM recording
}

// File analyses the Go trace in the named file ("-": standard input).
func File(ctx context.Context, name string, o Options) (*Report, error) {
	var sa *sched.Analyzer
	mk := func(st *tracein.Stacks, rules frame.Rules) analysis.Consumer {
		sa = sched.New(sched.Options{Rules: rules}, st)
		return sa
	}
	res, err := analysis.File(ctx, name, o.Budget, o.Partial, mk)
	if err != nil {
		return nil, err
	}
	opts := o.Budget
	opts.Rules.Module = res.Info.Module // the module the trace named, for the CPU profile too
	schedRep, warns, err := finishSched(sa, o.CPUProfile, opts, res)
	if err != nil {
		return nil, err
	}
	r, err := build(res, nil, o.Report)
	if err != nil {
		return nil, err
	}
	addSchedFindings(r.Report, schedRep, warns)
	r.Sched = schedRep
	return r, nil
}

// FromResult builds the report of a budget result analysed elsewhere,
// with no scheduler section (a JVM recording's comes with FromRecording).
func FromResult(res *budget.Result, in render.Inputs) (*Report, error) {
	return build(res, nil, in)
}

// FromRecording builds the report of a JVM recording: its budget res and
// its scheduler-churn analysis churn (package sched's JVMChurn, run over
// the same events; nil when it was not run), which becomes the report's
// scheduler section, as a Go trace's sched.Report does in File.
func FromRecording(res *budget.Result, churn *sched.JVMReport, in render.Inputs) (*Report, error) {
	return build(res, churn, in)
}

// build builds the report of res, with a JVM recording's churn analysis
// when there is one.
func build(res *budget.Result, churn *sched.JVMReport, in render.Inputs) (*Report, error) {
	rep, err := render.Build(res, in)
	if err != nil {
		return nil, err
	}
	render.AddChurn(rep, churn)
	if res.Info.JVM && rep.Sched == nil { // the JVM's churn analysis (docs/jfr-churn.md) fills Sched
		rep.Findings = append(rep.Findings, render.Finding{Kind: "no-scheduler-analysis", Text: "scheduler overhead (wake-up bursts of a thread pool, docs/method.md §9) is analysed in Go traces only, not yet in JVM recordings: a ForkJoinPool's scanning and parking shows here only as CPU samples in those frames"})
	}
	return &Report{Result: res, Report: rep}, nil
}

// Write prints the report as JSON or text, the scheduler section included.
func (r *Report) Write(w io.Writer, json bool) error {
	if json {
		return r.Report.WriteJSON(w)
	}
	if err := r.Report.WriteText(w); err != nil {
		return err
	}
	return writeSchedText(w, r.Sched)
}

// Unmatched returns an error, of the option "what-if", for a prediction
// that matched no term or whose name is ambiguous, or of the option the
// finding names (a trace ID no request carries: "trace-id").
func (r *Report) Unmatched() error {
	res := r.Result
	for _, g := range res.Groups {
		for _, p := range g.Predictions {
			for _, name := range []string{p.A, p.B} {
				if name == "" {
					continue
				}
				if err := budget.CheckName(res.Terms, name); err != nil {
					return opterr.Wrap("what-if", fmt.Errorf("%s: %w", p.Spec, err))
				}
			}
		}
	}
	for _, w := range res.Warnings {
		var f *budget.Finding
		if errors.As(w, &f) && f.Kind == budget.FindNoMatch {
			option := f.Option
			if option == "" {
				option = "what-if"
			}
			return opterr.Wrap(option, errors.New(f.Text))
		}
	}
	return nil
}

// Refusal turns a refusal of the whole trace (no requests, say), which the
// report has printed, into an error.
func (r *Report) Refusal() error {
	for _, w := range r.Result.Warnings {
		var f *budget.Finding
		if errors.As(w, &f) && f.Refuse && f.Group == "" {
			return fmt.Errorf("refused: %s", f.Text)
		}
	}
	return nil
}
