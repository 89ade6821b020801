package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/capture"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/httpurl"
	"github.com/latscope/latscope/internal/render"
)

func init() {
	cli.Register("capture", "fetch a trace, CPU profile and CPU counter from a live service's net/http/pprof, then analyse it", runCapture)
}

const captureSynopsis = "capture [flags] URL"

// captureUsage follows the flags in the command's help.
const captureUsage = `
Fetches URL/debug/pprof/trace and, over the same window, URL/debug/pprof/profile
(so the trace carries CPU samples), and reads process_cpu_seconds_total from
URL/metrics before and after when the service exposes Prometheus metrics (the
CPU cross-check). Saves trace.out, cpu.pprof and capture.json into the output
folder, complete or not at all, then prints the analysis. The service needs
net/http/pprof, not latscope's agent. See docs/capture.md.

examples:
  latscope capture http://127.0.0.1:6060                     5 s, into capture-<time>/
  latscope capture --seconds 10 -o slow-hour http://127.0.0.1:6060
  latscope capture --token "$TOKEN" --json https://svc.internal:6060
  latscope analyze --cpu-seconds 0.42 capture-20260102-150405/trace.out
`

// captureConfig is where the capture command's flags land.
type captureConfig struct {
	opts capture.Options
	dir  string
	json bool
}

func runCapture(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	// The URL may hold a password (http://user:pw@host): what is printed
	// names it without.
	return httpurl.RedactError(capture1(ctx, stdout, stderr, args))
}

// capture1 is runCapture before its error's URL passwords are hidden.
func capture1(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := parseCaptureFlags(args, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "capture: %d s from %s ...\n", cfg.opts.Seconds, httpurl.Redact(cfg.opts.URL))
	m, err := capture.Run(ctx, cfg.dir, cfg.opts)
	if err != nil {
		return err
	}
	printSaved(stderr, cfg.dir, m)
	path := filepath.Join(cfg.dir, capture.TraceFile)
	prof := ""
	if m.Profile != nil {
		prof = filepath.Join(cfg.dir, m.Profile.Name)
	}
	in := render.Inputs{File: path, CPUSeconds: m.CPU.Seconds, MinShare: 0.5}
	opts := budget.DefaultOptions
	opts.Rules.Module = m.MainModule // from go_build_info, when the service exports it
	tr, err := analyzeTrace(ctx, path, opts, false, prof, in)
	if err != nil {
		return fmt.Errorf("saved %s, but its analysis failed: %w", cfg.dir, err)
	}
	if err := tr.Write(stdout, cfg.json); err != nil {
		return err
	}
	return tr.Refusal()
}

// printSaved says what the capture wrote.
func printSaved(w io.Writer, dir string, m *capture.Meta) {
	fmt.Fprintf(w, "capture: saved %s: %s (%s)", dir, m.Trace.Name, kb(m.Trace.Bytes))
	if m.Profile != nil {
		fmt.Fprintf(w, ", %s (%s)", m.Profile.Name, kb(m.Profile.Bytes))
	}
	fmt.Fprintf(w, ", %s\n", capture.MetaFile)
	if m.CPU.Seconds >= 0 {
		fmt.Fprintf(w, "capture: process CPU over the window %.3f s (%s)\n", m.CPU.Seconds, m.CPU.Metric)
	}
	for _, s := range m.Warnings {
		fmt.Fprintf(w, "capture: warning: %s\n", httpurl.Redact(s))
	}
}

func kb(n int64) string { return fmt.Sprintf("%.1f kB", float64(n)/1e3) }

// parseCaptureFlags parses flags before and after the URL.
func parseCaptureFlags(args []string, stderr io.Writer) (captureConfig, error) {
	cfg := captureConfig{opts: capture.DefaultOptions}
	o := &cfg.opts
	fs := cli.NewFlagSet("capture", captureSynopsis, stderr)
	cli.UsageWith(fs, stderr, captureSynopsis, captureUsage)
	intVar(fs.FlagSet, &o.Seconds, "seconds", o.Seconds, 1, 3600, "length of the trace and CPU profile in whole `seconds`")
	fs.StringVar(&cfg.dir, "o", "", "output `DIR` (must not exist; default capture-<time>)")
	fs.StringVar(&o.Token, "token", "", "bearer `TOKEN` for services that want one")
	fs.BoolVar(&cfg.json, "json", false, "print the analysis as JSON (schema: docs/json.md)")
	fs.BoolVar(&o.NoProfile, "no-profile", false, "skip the CPU profile (the trace then has no CPU samples)")
	fs.DurationVar(&o.Timeout, "timeout", 0, "bound on the whole capture (default --seconds + 10s)")
	pos, err := fs.ParseInterleaved(args)
	if err != nil {
		return cfg, err
	}
	if len(pos) != 1 {
		return cfg, fmt.Errorf("want one URL argument, got %d (see latscope capture -h)", len(pos))
	}
	o.URL = pos[0]
	if cfg.dir == "" {
		cfg.dir = "capture-" + time.Now().Format("20060102-150405")
	}
	if err := o.Validate(); err != nil {
		return cfg, fmt.Errorf("%w (flags --seconds, --timeout and the URL)", err)
	}
	return cfg, nil
}
