package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/lab"
	"github.com/latscope/latscope/lab/fleet"
)

func init() {
	cli.Register("fleet", "three instances with the agent's metrics, a private Prometheus, shared PostgreSQL; faults in phases; checks triage's verdicts", runLabFleet)
	cli.Register("fleet-serve", "one instance of the fleet scenario's service (/db, /nodb, /quote with --upstream, /metrics with the agent's metrics), as a process of its own", runLabFleetServe)
}

const labFleetExamples = `
examples:
  sudo latscope-lab fleet                  eight phases with a 3 s "minute" (about 6 minutes)
  sudo latscope-lab fleet --short          the CI profile: throttle, lock, stop, none (about 2 minutes)
  sudo latscope-lab fleet --minute 5s      a longer "minute": more scrapes per step
  sudo latscope-lab fleet --json           the phases, truths and verdicts as JSON
  sudo latscope-lab fleet --hold 10m       then run the report's triage commands by hand
`

// labFleetOptions are the flags of `latscope-lab fleet`.
type labFleetOptions struct {
	labOptions
	cfg fleet.Config
}

// runLabFleet runs the fleet scenario: its own flags (the minute, the
// thresholds) over the lab's output folder, report and checks.
func runLabFleet(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o := labFleetOptions{cfg: fleet.DefaultConfig}
	fs := cli.NewFlagSet("fleet", "fleet [flags]", stderr)
	fs.BoolVar(&o.short, "short", false, "the CI profile: shorter phases, without the upstream, continuous, gc and thin phases (about 2 minutes)")
	fs.BoolVar(&o.json, "json", false, "print the scenario's JSON instead of the Markdown report")
	fs.BoolVar(&o.loaded, "loaded", false, "run a CPU burner on every core beside the scenario")
	fs.StringVar(&o.out, "o", "", "output `DIR` for report.md, fleet.json and the lab log (default lab-out/fleet-TIME)")
	fs.DurationVar(&o.cfg.Minute, "minute", o.cfg.Minute, "the compressed \"minute\": triage's step (whole seconds, at least 2s)")
	fs.DurationVar(&o.cfg.Threshold, "threshold", o.cfg.Threshold, "triage's DB-call p95 threshold")
	fs.DurationVar(&o.cfg.RequestThreshold, "request-threshold", o.cfg.RequestThreshold, "triage's request p99 threshold: the signal of the stop, upstream and thin phases")
	fs.DurationVar(&o.cfg.Hold, "hold", 0, "keep Prometheus and the instances up this long after the phases, to run latscope triage by hand (Ctrl-C ends it)")
	cli.UsageWith(fs, stderr, "fleet [flags]", labFleetExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("fleet: unexpected argument %q", fs.Arg(0))
	}
	if o.short {
		o.cfg = o.cfg.Shorter()
	}
	if err := o.cfg.Check(); err != nil {
		return err
	}
	if _, err := fleet.FindPrometheus(""); err != nil {
		return fmt.Errorf("fleet needs Prometheus: %w", err)
	}
	sc := fleet.Scenario(o.cfg, fleet.Triage)
	if err := checkNeeds(sc, ""); err != nil {
		return err
	}
	if o.out == "" {
		o.out = filepath.Join("lab-out", "fleet-"+time.Now().Format("20060102-150405"))
	}
	if removed, err := lab.SweepLeftovers(filepath.Dir(filepath.Clean(o.out))); len(removed) > 0 || err != nil {
		fmt.Fprintf(stderr, "lab: removed what killed runs left: %s%s\n", strings.Join(removed, ", "), errSuffix(err))
	}
	if removed := fleet.SweepPrometheus(); len(removed) > 0 {
		fmt.Fprintf(stderr, "lab: removed what killed runs left: %s\n", strings.Join(removed, ", "))
	}
	if err := checkOutDir(o.out); err != nil {
		return err
	}
	prof := lab.Short
	prof.Name = "fleet"
	env, err := labEnv(&o.labOptions, prof)
	if err != nil {
		return err
	}
	return runScenario(ctx, sc, env, &o.labOptions, stdout, stderr)
}

const labFleetServeExamples = `
examples:
  latscope-lab fleet-serve --db-url postgres://postgres@127.0.0.1:5432/postgres --addr 127.0.0.1:8081
  curl 127.0.0.1:8081/db; curl 127.0.0.1:8081/metrics | grep latscope_
  curl -X POST '127.0.0.1:8081/burn?for=2s&goroutines=3'     a burst of CPU work
`

// runLabFleetServe runs one instance of the fleet's service.
func runLabFleetServe(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg := fleet.DefaultServeConfig
	fs := cli.NewFlagSet("fleet-serve", fleet.ServeUsage, stderr)
	cfg.RegisterFlags(fs.FlagSet)
	cli.UsageWith(fs, stderr, fleet.ServeUsage, labFleetServeExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("fleet-serve: unexpected argument %q", fs.Arg(0))
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	return fleet.Serve(ctx, cfg, stdout)
}
