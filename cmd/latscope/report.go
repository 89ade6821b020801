package main

import (
	"context"
	"io"

	"github.com/latscope/latscope/analysis"
	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/render"
	"github.com/latscope/latscope/sched"
)

// traceReport is one Go trace analysed the way every command that prints an
// analysis does it (analyze, capture): the budget and the scheduler from one
// read, a CPU profile of the same window when there is one, and the report
// with every finding merged before anything is written.
type traceReport struct {
	res   *budget.Result
	rep   *render.Report
	sched *sched.Report
}

// analyzeTrace reads a Go trace once into a traceReport. cpuProf, when not
// "", is a pprof CPU profile of the same window.
func analyzeTrace(ctx context.Context, file string, opts budget.Options, partial bool, cpuProf string, in render.Inputs) (*traceReport, error) {
	sa, mk := schedConsumer(opts)
	res, err := analysis.File(ctx, file, opts, partial, mk)
	if err != nil {
		return nil, partialHint(err)
	}
	opts.Rules.Module = res.Info.Module // the module the trace named, for the CPU profile too
	schedRep, warns, err := finishSched(*sa, cpuProf, opts, res)
	if err != nil {
		return nil, err
	}
	rep, err := render.Build(res, in)
	if err != nil {
		return nil, err
	}
	addSchedFindings(rep, schedRep, warns)
	return &traceReport{res: res, rep: rep, sched: schedRep}, nil
}

// write prints the report as JSON or text, the scheduler section included.
func (t *traceReport) write(w io.Writer, json bool) error {
	if json {
		return t.rep.WriteJSON(w)
	}
	if err := t.rep.WriteText(w); err != nil {
		return err
	}
	return writeSchedText(w, t.sched)
}
