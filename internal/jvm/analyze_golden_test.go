package jvm_test

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	"github.com/latscope/latscope/internal/golden"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jvm"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
)

// TestAnalyzeGolden renders the analysis of internal/jfr/testdata/print.json
// as the CLI prints it, with the scheduler churn of the same events;
// -update rewrites testdata/*.golden. It is an external test: it uses the
// package as its callers do, with package render, which prints it, and
// package sched, which judges the churn.
func TestAnalyzeGolden(t *testing.T) {
	tests := []struct {
		name     string
		opts     func(*jvm.Options)
		minShare float64
	}{
		// without latencies every share is 0: --min-share 0 lists the terms
		{"requests", func(o *jvm.Options) { o.Requests = 2 }, 0},
		{"load", func(o *jvm.Options) {
			o.Load = &jvm.Requests{Count: 2, Latencies: []int64{110e6, 125e6}, EdgeCounted: 1, After: 1, Outside: 3}
		}, 0.5},
		{"pool", func(o *jvm.Options) {
			o.Load = &jvm.Requests{Count: 2, Latencies: []int64{110e6, 125e6}}
			o.Rules.Pools = append(o.Rules.Pools[:len(o.Rules.Pools):len(o.Rules.Pools)], "Probe$Pool.")
		}, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := jvm.DefaultOptions
			o.Handler = "Probe.handle"
			tt.opts(&o)
			res := jvm.PrintResult(t, o)
			rep, err := render.Build(res, render.Inputs{File: "print.jfr", CPUSeconds: -1, MinShare: tt.minShare})
			if err != nil {
				t.Fatal(err)
			}
			render.AddChurn(rep, printChurn(t, o.Rules))
			var got bytes.Buffer
			if err := rep.WriteText(&got); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "analyze-"+tt.name+".golden"), got.Bytes(), updateGolden())
		})
	}
}

// printChurn is the JVM's scheduler-churn analysis of internal/jfr/testdata/print.json,
// with the budget's rules, as `latscope analyze` runs it beside the budget.
func printChurn(t *testing.T, rules jfr.Rules) *sched.JVMReport {
	rec, evs := jvm.PrintEvents(t)
	c := sched.NewJVMChurn(sched.JVMOptions{Recording: rec, Rules: &rules})
	for i := range evs {
		c.Event(&evs[i])
	}
	return c.Result()
}

// updateGolden reports whether -update was given (the flag is package
// jvm's own tests').
func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}
