package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/analysis"
	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/render"
	"github.com/latscope/latscope/sched"
	"github.com/latscope/latscope/tracein"
)

// schedConsumer returns a slot for the scheduler analyser and the factory
// that creates it inside analyze's read loop.
func schedConsumer(opts budget.Options) (*(*sched.Analyzer), analysis.NewConsumer) {
	sa := new(*sched.Analyzer)
	return sa, func(st *tracein.Stacks) analysis.Consumer {
		*sa = sched.New(sched.Options{Rules: opts.Rules}, st)
		return *sa
	}
}

// finishSched finalises the scheduler analysis, adding a pprof CPU profile
// of the same window when --cpu gives one.
func finishSched(sa *sched.Analyzer, cpuProf string, opts budget.Options) (*sched.Report, error) {
	if sa == nil {
		return nil, nil
	}
	rep := sa.Finalize()
	if cpuProf == "" {
		return rep, nil
	}
	f, err := os.Open(cpuProf)
	if err != nil {
		return nil, fmt.Errorf("--cpu: %w", err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("--cpu %s: not a pprof profile: %w", cpuProf, err)
	}
	if err := rep.UseProfile(p, sched.Options{Rules: opts.Rules}); err != nil {
		return nil, fmt.Errorf("--cpu %s: %w", cpuProf, err)
	}
	return rep, nil
}

// addSchedFindings adds the scheduler findings and report to the analysis report.
func addSchedFindings(rep *render.Report, s *sched.Report) {
	if s == nil {
		return
	}
	rep.Sched = s
	for _, f := range s.Findings() {
		kind := f.Kind.String()
		if kind == "no-cpu-samples" {
			continue // said once in the scheduler section
		}
		rep.Findings = append(rep.Findings, render.FindingJSON{Kind: kind, Text: f.Error()})
	}
}

// writeSchedText prints the scheduler section when there is CPU data.
func writeSchedText(w io.Writer, s *sched.Report) error {
	if s == nil || s.CPU.Samples == 0 {
		return nil
	}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		return err
	}
	text := strings.TrimRight(b.String(), "\n")
	_, err := fmt.Fprintf(w, "\nscheduler and runtime overhead (from CPU samples):\n%s\n", text)
	return err
}
