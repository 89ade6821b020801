package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/jfr"
	"github.com/latscope/latscope/loadgen"
)

func init() { analyzeJFR = runAnalyzeJFR }

// runAnalyzeJFR analyses a JVM recording (docs/jfr.md): the waits beneath
// the --handler frame, per request counted by --requests or --requests-from.
func runAnalyzeJFR(ctx context.Context, path string, o jfrOptions) (*budget.Result, error) {
	if o.Requests < 0 {
		return nil, fmt.Errorf("--requests %d: want a positive count", o.Requests)
	}
	if o.Requests > 0 && o.RequestsFrom != "" {
		return nil, errors.New("--requests and --requests-from both count the requests: give one")
	}
	if strings.TrimSpace(o.Handler) == "" {
		return nil, jfr.ErrNoHandler
	}
	if o.Requests == 0 && o.RequestsFrom == "" {
		return nil, jfr.ErrNoCount
	}
	opts := jfr.DefaultOptions
	opts.Handler, opts.Requests = o.Handler, o.Requests
	opts.Rules.App = o.App
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		return nil, err
	}
	if o.RequestsFrom != "" {
		q, err := requestsFrom(o.RequestsFrom, rec)
		if err != nil {
			return nil, err
		}
		opts.Load = &q
	}
	return jfr.Analyze(ctx, path, rec, opts)
}

// requestsFrom counts the load results in file that fall inside rec.
func requestsFrom(file string, rec *jfr.Recording) (jfr.Requests, error) {
	f, err := os.Open(file)
	if err != nil {
		return jfr.Requests{}, fmt.Errorf("--requests-from: %w", err)
	}
	defer f.Close()
	q, err := jfr.CountRequests(loadgen.NewDecoder(f), rec.Start(), rec.End())
	if err != nil {
		return jfr.Requests{}, fmt.Errorf("--requests-from %s: %w", file, err)
	}
	return q, nil
}
