package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/render"
)

func init() {
	cli.Register("compare", "check predictions from one trace against a second trace where the fix was made", runCompare)
}

const compareExamples = `
examples:
  latscope compare --what-if overlap=callUpstream,queryDB serial.trace overlapped.trace
  latscope compare --json --miss 3 --what-if remove=lockedSection before.trace after.trace
  latscope compare -o checks.txt --what-if remove=lockedSection before.trace after.trace

exit status: 0 when every prediction is a hit or inconclusive, 1 when any is a miss
(the report is written all the same), 2 on a usage or input error.
`

func runCompare(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var (
		whatIfs whatIfs
		app     stringList
		task    string
		miss    float64
		asJSON  bool
		clients float64
		inProc  bool
		cores   float64
		workers int
		pools   []queueing.PoolSpec
		out     cli.ReportFile
	)
	fs := cli.NewFlagSet("compare", "compare [flags] BEFORE AFTER", stderr)
	fs.Var(whatIfs.flag("what-if"), "what-if", "what-if `SPEC` evaluated on BEFORE (repeatable; alias --predict), as in analyze: remove=TERM, scale=TERM:FACTOR, overlap=TERM,TERM change the timeline; pool=SIZE|NAME:SIZE, cores=N, clients=N, workers=N change the queueing model's inputs. Each is predicted by the one engine (the queueing model where a queue is in play, else the timeline simulation) with its method and 95 % interval")
	fs.Var(whatIfs.flag("predict"), "predict", "the same as --what-if `SPEC`")
	fs.Var(&app, "app", "package-path `PREFIX` of your code (repeatable)")
	fs.StringVar(&task, "task", "", "compare requests of task type `NAME` (default: the most frequent)")
	positiveFloatVar(fs.FlagSet, &miss, "miss", render.DefaultMissPct, maxMissPct, "report a miss when a prediction's mean is off by more than this `PERCENT`")
	floatVar(fs.FlagSet, &clients, "clients", 0, 0, maxClients, "closed-model clients `N` for throughput predictions (default: estimated from BEFORE)")
	fs.BoolVar(&inProc, "clients-in-process", false, clientsInProcessUsage)
	floatVar(fs.FlagSet, &cores, "cores", 0, 0, maxCores, "CPU cores `N` available to the service in BEFORE (default: GOMAXPROCS in the trace)")
	intVar(fs.FlagSet, &workers, "workers", 0, 0, queueing.MaxExactPopulation, "the server's worker threads `N` for the queueing model: at most N requests inside at once, the rest wait in its queue, outside the request (default: from a JVM recording whose executor says, io.latscope.ServerQueue; else none)")
	fs.Var(&poolFlag{pools: &pools}, "pool", "a pool of `SIZE` in BEFORE (repeatable), as in analyze: SIZE alone a database/sql, pgxpool or puddle pool, recognised by its acquire wait, which also caps the predicted throughput; or NAME:SIZE, a pool, semaphore or lock (SIZE 1) named by the frame that acquires it, for the queueing model")
	fs.BoolVar(&asJSON, "json", false, "print JSON (schema: docs/json.md)")
	out.Register(fs)
	cli.UsageWith(fs, stderr, "compare [flags] BEFORE AFTER", compareExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("want two trace files (before and after), got %d arguments", fs.NArg())
	}
	pool, modelPools, err := analyzePools(pools, len(whatIfs.specs) > 0)
	if err != nil {
		return err
	}
	preds := whatIfs.predictions()
	for _, name := range fs.Args() {
		if err := checkInput(name, "trace file"); err != nil {
			return err
		}
	}
	if err := out.Check(fs.Args(), nil); err != nil {
		return err
	}
	reports := make([]*render.Report, 2)
	// The predictions' intervals are the engine's (whatif.Evaluate, through
	// render.Inputs.Specs): batch means over each request's simulated
	// latency. Only the second trace's series is needed here.
	samples := &render.Samples{After: map[string][]int64{}}
	for i, name := range fs.Args() {
		opts := budget.DefaultOptions
		opts.Rules.App = app
		if i == 0 {
			opts.Predictions = preds
		}
		r, err := compareResult(ctx, name, opts) // a Go trace or a JVM recording
		if _, ok := errors.AsType[*analysis.DamagedError](err); ok {
			return fmt.Errorf("%w (compare needs two whole traces: record this one again; analyze --partial reads what came before the damage)", err)
		}
		if err != nil {
			return err
		}
		res := r.Res
		in := render.Inputs{File: name, CPUSeconds: -1, Task: task, Demands: r.Demands}
		if i == 0 {
			in.Clients, in.Cores, in.Workers, in.Pool, in.Pools, in.Specs = clients, cores, workers, pool, modelPools, whatIfs.engine()
			in.ClientsInProcess = inProc
			if len(in.Specs) > 0 { // --pool SIZE on a recording: the pool it waits for, as analyze and predict name it
				if in.Pools, err = jvmPools(res, in.Pools); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
		}
		rep, err := pipeline.FromRecording(res, r.Churn, in)
		if err != nil {
			return err
		}
		if i == 0 {
			if err := rep.Unmatched(); err != nil {
				return err
			}
			if err := rep.Report.WhatIfErr(); err != nil {
				return err
			}
		} else {
			for _, g := range res.Groups {
				samples.After[g.Name] = g.Latencies
			}
		}
		reports[i] = rep.Report
	}
	c, err := render.CompareSamples(reports[0], reports[1], miss, samples)
	if err != nil {
		return err
	}
	err = out.Write(stdout, func(w io.Writer) error {
		if asJSON {
			return c.WriteJSON(w)
		}
		return c.WriteText(w)
	})
	if err != nil {
		return err
	}
	return missed(c)
}

// missed is compare's verdict, once the report is written: a failedVerdict
// (exit status 1) naming the predictions whose verdict is a miss (the
// error's 95 % interval wholly outside ±--miss %); nil when every one is a
// hit or inconclusive, or there is none.
func missed(c *render.Comparison) error {
	var specs []string
	for _, p := range c.Predictions {
		if p.Verdict == render.VerdictMiss {
			specs = append(specs, p.Spec)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	return cli.VerdictFailed("%d of %d predictions missed (the error's 95 %% interval wholly outside ±%g %%): %s",
		len(specs), len(c.Predictions), c.MissPct, strings.Join(specs, ", "))
}
