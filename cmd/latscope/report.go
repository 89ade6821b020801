package main

import (
	"context"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/render"
)

// analyzeTrace runs the pipeline on a Go trace; cpuProf, when not "", is a
// pprof CPU profile of the same window. A damaged trace's error says that
// --partial analyses what came before.
func analyzeTrace(ctx context.Context, file string, opts budget.Options, partial bool, cpuProf string, in render.Inputs) (*pipeline.Report, error) {
	r, err := pipeline.File(ctx, file, pipeline.Options{Budget: opts, Partial: partial, CPUProfile: cpuProf, Report: in})
	return r, partialHint(err)
}
