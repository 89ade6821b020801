package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jvm"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/tracein"
)

func init() {
	readJFR = runAnalyzeJFR
}

// runAnalyzeJFR analyses a JVM recording (docs/jfr.md). With the Java
// library's latscope.Request events it is per request, from the recording
// alone; without them, the waits beneath the --handler frame, per request
// counted by --requests or --requests-from.
func runAnalyzeJFR(ctx context.Context, path string, o jfrOptions) (*jfrResult, error) {
	r, _, err := analyzeJFRWith(ctx, path, o)
	return r, err
}

// analyzeJFRWith is runAnalyzeJFR that also returns the analyzer (nil for
// a churn-only recording).
func analyzeJFRWith(ctx context.Context, path string, o jfrOptions) (*jfrResult, *jvm.Analyzer, error) {
	if o.Requests < 0 {
		return nil, nil, fmt.Errorf("--requests %d: want a positive count", o.Requests)
	}
	if o.Requests > 0 && o.RequestsFrom != "" {
		return nil, nil, errors.New("--requests and --requests-from both count the requests: give one")
	}
	opts := jvm.DefaultOptions
	opts.Handler, opts.Requests = o.Handler, o.Requests
	opts.Rules.App = o.App
	opts.Predictions = o.Predictions
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		return nil, nil, err
	}
	marked := hasType(rec, "latscope.Request")
	if !marked && strings.TrimSpace(o.Handler) == "" && o.Requests == 0 && o.RequestsFrom == "" && len(o.Only) == 0 {
		r, err := churnOnly(ctx, path, rec, o)
		return r, nil, err
	}
	if !marked { // handler mode: refuse before the long read
		if strings.TrimSpace(o.Handler) == "" {
			return nil, nil, fmt.Errorf("%s: %w", path, jvm.ErrNoHandler)
		}
		if o.Requests == 0 && o.RequestsFrom == "" {
			return nil, nil, fmt.Errorf("%s: %w", path, jvm.ErrNoCount)
		}
		if err := requestOnly(o, path); err != nil {
			return nil, nil, err
		}
	}
	if o.RequestsFrom != "" {
		q, err := requestsFrom(o.RequestsFrom, rec)
		if err != nil {
			return nil, nil, err
		}
		opts.Load = &q
	}
	// one read feeds the budget and the scheduler churn (docs/jfr-churn.md)
	ch := sched.NewJVMChurn(churnOptions(rec, opts.Rules))
	a, err := jvm.Read(ctx, path, rec, opts, ch.Event)
	if err != nil {
		return nil, nil, err
	}
	if !a.Requests() {
		if err := requestOnly(o, path); err != nil {
			return nil, nil, err
		}
	}
	res := a.Finalize()
	return &jfrResult{Res: res, Demands: pipeline.JFRDemands(res, a, -1), RequestCPU: a.RequestCPU, Churn: ch.Result()}, a, nil
}

// churnOptions are the churn analysis's options for the recording rec,
// with the budget's rules (their application prefixes decide who pays
// for the machinery).
func churnOptions(rec *jfr.Recording, rules jfr.Rules) sched.JVMOptions {
	o := sched.DefaultJVMOptions
	o.Recording, o.Rules = rec, &rules
	return o
}

// churnOnly analyses a recording with neither the library's requests nor
// a handler to count by: its scheduler churn (docs/jfr-churn.md) is all it
// can judge, and a finding says what the budget needs.
func churnOnly(ctx context.Context, path string, rec *jfr.Recording, o jfrOptions) (*jfrResult, error) {
	rules := jvm.DefaultOptions.Rules
	rules.App = o.App
	ch, err := sched.AnalyzeJVM(ctx, path, rec, churnOptions(rec, rules))
	if err != nil {
		return nil, err
	}
	d := rec.End().Sub(rec.Start())
	res := &budget.Result{Info: budget.TraceInfo{JVM: true, StartWall: rec.Start(), End: tracein.Time(d), CPUSamples: int(ch.Samples)},
		Warnings: []error{&budget.Finding{Kind: budget.FindNoRequests, Text: "no request budget: the recording has no latscope.Request events (the Java library in java/ adds them, docs/jfr.md) and no --handler FRAME with --requests N or --requests-from FILE was given, so only the scheduler churn below is judged"}}}
	return &jfrResult{Res: res, Demands: res, RequestCPU: -1, Churn: ch}, nil
}

// requestOnly refuses the flags that need the latscope.Request events in
// a recording without them.
func requestOnly(o jfrOptions, path string) error {
	if len(o.Only) == 0 {
		return nil
	}
	verb := "needs"
	if len(o.Only) > 1 {
		verb = "need"
	}
	return fmt.Errorf("%s %s per-request timelines, and %s has no latscope.Request events: add the Java library (java/, docs/jfr.md) to the service and record again",
		strings.Join(o.Only, ", "), verb, path)
}

// hasType reports whether any chunk of rec declares the event type name.
func hasType(rec *jfr.Recording, name string) bool {
	for _, c := range rec.Chunks {
		for _, n := range c.Types {
			if n == name {
				return true
			}
		}
	}
	return false
}

// requestsFrom counts the load results in file that fall inside rec.
func requestsFrom(file string, rec *jfr.Recording) (jvm.Requests, error) {
	f, err := os.Open(file)
	if err != nil {
		return jvm.Requests{}, fmt.Errorf("--requests-from: %w", err)
	}
	defer f.Close()
	q, err := jvm.CountRequests(loadgen.NewDecoder(f), rec.Start(), rec.End())
	if err != nil {
		return jvm.Requests{}, fmt.Errorf("--requests-from %s: %w", file, err)
	}
	return q, nil
}

// compareResult reads one side of `latscope compare BEFORE AFTER`: a Go
// execution trace as analysis.File reads it, or a JVM recording (.jfr) as
// analyze reads it (request mode: the Java library's latscope.Request
// events give per-request latencies, which compare's intervals need), into
// the same result, with opts' predictions and application prefixes, and
// the result the engine reads demands from (jfrResult.Demands: the
// report's own for a Go trace).
func compareResult(ctx context.Context, name string, opts budget.Options) (*jfrResult, error) {
	if !strings.HasSuffix(name, ".jfr") {
		res, err := analysis.File(ctx, name, opts, false)
		if err != nil {
			return nil, err
		}
		return &jfrResult{Res: res, Demands: res, RequestCPU: -1}, nil
	}
	var only []string
	if len(opts.Predictions) > 0 {
		only = []string{"--what-if"}
	}
	r, a, err := analyzeJFRWith(ctx, name, jfrOptions{App: opts.Rules.App, Predictions: opts.Predictions, Only: only})
	if err != nil {
		return nil, err
	}
	if a == nil || !a.Requests() {
		return nil, fmt.Errorf("%s: compare needs per-request latencies, and the recording has no latscope.Request events: add the Java library (java/, docs/jfr.md) to the service and record again", name)
	}
	return r, nil
}
