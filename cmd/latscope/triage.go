package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/httpurl"
	"github.com/latscope/latscope/internal/report/triagereport"
	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/triage"
)

func init() {
	cli.Register("triage", "fleet triage from Prometheus: which instances were slow in which minutes, shared or local, which dependency (database, an outbound route, the host), when, and which host signal rose", runTriage)
}

const triageSynopsis = "triage --prometheus URL [flags]"

const triageExamples = `
examples:
  latscope triage --prometheus http://prometheus:9090 --job orders --range 24h
  latscope triage --prometheus http://prometheus:9090 --job orders --since 2026-12-03T00:00:00Z --until 2026-12-03T06:00:00Z
  latscope triage --prometheus http://prometheus:9090 --job orders --range 7d --step 5m --html triage.html
  latscope triage --prometheus https://prom.example --bearer-token-file token.txt --job orders --json -o triage.json
`

// triageOptions are the flags of `latscope triage`.
type triageOptions struct {
	c                     triage.Config
	since, until, rng     string
	tokenFile, passFile   string
	json                  bool
	html, out             string
	threshold, step, tout time.Duration
}

func runTriage(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return httpurl.RedactError(triage1(ctx, stdout, stderr, args))
}

// triage1 is runTriage before its error's URL passwords are hidden.
func triage1(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o, err := parseTriage(stderr, args, time.Now())
	if err != nil {
		return err
	}
	var set atomicfile.Set
	var rep *triage.Report
	if o.out != "" {
		set.Add(o.out, func(w io.Writer) error { return writeTriage(w, rep, o.json) })
	}
	if o.html != "" {
		set.Add(o.html, func(w io.Writer) error { return triagereport.WriteHTML(w, rep) })
	}
	if err := set.Check(); err != nil {
		return err
	}
	if rep, err = triage.Run(ctx, o.c); err != nil {
		return err
	}
	if o.out != "" || o.json {
		for _, w := range rep.Warnings {
			fmt.Fprintf(stderr, "latscope triage: warning: %s\n", termsafe.String(w))
		}
	}
	if err := set.Commit(); err != nil {
		return err
	}
	if o.out != "" {
		return nil
	}
	return writeTriage(stdout, rep, o.json)
}

// writeTriage writes rep as JSON or text.
func writeTriage(w io.Writer, rep *triage.Report, json bool) error {
	if json {
		return triagereport.WriteJSON(w, rep)
	}
	return triagereport.WriteText(w, rep)
}

// parseTriage parses the flags; relative times count back from now.
func parseTriage(stderr io.Writer, args []string, now time.Time) (*triageOptions, error) {
	o := &triageOptions{}
	fs := cli.NewFlagSet("triage", triageSynopsis, stderr)
	fs.StringVar(&o.c.URL, "prometheus", "", "Prometheus base `URL` (required), e.g. http://127.0.0.1:9090")
	fs.StringVar(&o.c.Job, "job", "", "the `JOB` label of the fleet (default: every job with latscope metrics)")
	fs.StringVar(&o.c.Route, "route", "", "only requests and DB calls of `ROUTE` (the route label)")
	fs.StringVar(&o.since, "since", "", "start `TIME`: RFC 3339 (2026-12-03T00:00:00Z) or relative (-6h, -7d)")
	fs.StringVar(&o.until, "until", "", "end `TIME`: RFC 3339 or relative (default: now)")
	fs.StringVar(&o.rng, "range", "", "the `DURATION` ending now (6h, 7d); default 1h without --since")
	fs.DurationVar(&o.step, "step", triage.DefaultStep, "the analysis step (whole seconds): one bad or good value per instance per step")
	fs.DurationVar(&o.threshold, "threshold", triage.DefaultThreshold, "a step is bad when the signal is over this (best a histogram bucket boundary), or far over the other instances' in the step (the peer rule)")
	fs.StringVar(&o.c.Signal, "signal", "db", "`SIGNAL`: db (DB-call p95: requests without DB calls are not judged, and the report says whether they slowed) or request (request p99: every request); a lower percentile when steps have too few calls for it")
	fs.StringVar(&o.tokenFile, "bearer-token-file", "", "read a bearer token for Prometheus from `FILE`")
	fs.StringVar(&o.c.Username, "user", "", "basic-auth `USER` for Prometheus (with --password-file)")
	fs.StringVar(&o.passFile, "password-file", "", "read the basic-auth password from `FILE`")
	fs.DurationVar(&o.tout, "timeout", triage.DefaultTimeout, "time limit of each query")
	fs.BoolVar(&o.json, "json", false, "print JSON (schema: docs/triage.md)")
	fs.StringVar(&o.html, "html", "", "also write a self-contained HTML page (a timeline per instance) to `FILE`")
	fs.StringVar(&o.out, "o", "", "write the text (or JSON) to `FILE` instead of standard output")
	cli.UsageWith(fs, stderr, triageSynopsis, triageExamples)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := o.check(fs); err != nil {
		return nil, err
	}
	if err := o.times(now); err != nil {
		return nil, err
	}
	if err := o.credentials(); err != nil {
		return nil, err
	}
	o.c.Step, o.c.Threshold, o.c.Timeout = o.step, o.threshold, o.tout
	return o, nil
}

// check validates the flags that need no file or clock.
func (o *triageOptions) check(fs *cli.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q (the Prometheus URL goes in --prometheus)", httpurl.Redact(fs.Arg(0)))
	case o.c.URL == "":
		return errors.New("flag --prometheus is required (the Prometheus base URL, e.g. http://127.0.0.1:9090)")
	case !strings.HasPrefix(o.c.URL, "http://") && !strings.HasPrefix(o.c.URL, "https://"):
		return fmt.Errorf("flag --prometheus %q: want an http:// or https:// URL", httpurl.Redact(o.c.URL))
	case o.step < time.Second || o.step%time.Second != 0:
		return fmt.Errorf("flag --step %v: want whole seconds, at least 1s", o.step)
	case o.step > triage.MaxStep:
		return fmt.Errorf("flag --step %v: at most %v (the rules look at minutes and hours)", o.step, triage.MaxStep)
	case o.threshold <= 0:
		return fmt.Errorf("flag --threshold %v: want a positive duration", o.threshold)
	case o.tout <= 0:
		return fmt.Errorf("flag --timeout %v: want a positive duration", o.tout)
	case o.c.Signal != "db" && o.c.Signal != "request":
		return fmt.Errorf("flag --signal %q: want db or request", o.c.Signal)
	case o.rng != "" && (o.since != "" || o.until != ""):
		return errors.New("flag --range is the time ending now: give it alone, or --since and --until")
	case o.tokenFile != "" && (o.c.Username != "" || o.passFile != ""):
		return errors.New("flags --bearer-token-file and --user/--password-file: give one kind of credentials")
	case o.passFile != "" && o.c.Username == "":
		return errors.New("flag --password-file needs --user")
	case o.html != "" && o.html == o.out:
		return fmt.Errorf("flags --html and -o name the same file %s", o.html)
	}
	return nil
}

// times sets the range from --since/--until or --range, and checks that
// it lies between 1970 and triage.MaxTime and holds at most
// triage.MaxSteps steps.
func (o *triageOptions) times(now time.Time) error {
	if err := o.span(now); err != nil {
		return err
	}
	since, which := "--since "+o.since, "--since, --until"
	if o.since == "" {
		r := o.rng
		if r == "" {
			r = "1h"
		}
		since, which = "--range "+r, "--range"
	}
	switch {
	case o.c.Start.Before(triage.MinTime):
		return fmt.Errorf("flag %s: starts before 1970 (%s), where Prometheus has no samples", since, o.c.Start.UTC().Format(time.RFC3339))
	case o.c.End.After(triage.MaxTime):
		return fmt.Errorf("flag --until %s: after %d", o.until, triage.MaxTime.Year())
	}
	if n := int64(o.c.End.Truncate(o.step).Sub(o.c.Start.Truncate(o.step)) / o.step); n > triage.MaxSteps {
		return fmt.Errorf("flags %s and --step: %d steps of %v, at most %d (a larger --step or a shorter range)", which, n, model.Duration(o.step), triage.MaxSteps)
	}
	return nil
}

// span sets the range from --since/--until or --range.
func (o *triageOptions) span(now time.Time) error {
	o.c.End = now
	if o.rng != "" || o.since == "" {
		r := o.rng
		if r == "" {
			r = "1h"
		}
		d, err := model.ParseDuration(r)
		if err != nil || d <= 0 {
			return fmt.Errorf("flag --range %q: want a positive duration like 30m, 6h or 7d", r)
		}
		o.c.Start = now.Add(-time.Duration(d))
		return nil
	}
	var err error
	if o.c.Start, err = parseWhen(o.since, now); err != nil {
		return fmt.Errorf("flag --since: %w", err)
	}
	if o.until != "" {
		if o.c.End, err = parseWhen(o.until, now); err != nil {
			return fmt.Errorf("flag --until: %w", err)
		}
	}
	if !o.c.End.After(o.c.Start) {
		return fmt.Errorf("flags --since %s and --until %s: the end is not after the start", o.since, o.until)
	}
	return nil
}

// parseWhen parses an RFC 3339 time, "now", or a time relative to now
// ("-2h", "-7d").
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "now" {
		return now, nil
	}
	if rel, ok := strings.CutPrefix(s, "-"); ok {
		d, err := model.ParseDuration(rel)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: want RFC 3339 or a relative time like -2h or -7d", s)
		}
		return now.Add(-time.Duration(d)), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-12-03T00:00:00Z) or a relative time like -2h", s)
	}
	return t, nil
}

// maxCredentialFile bounds a token or password file.
const maxCredentialFile = 64 << 10

// readCredential reads the secret in path, the value of flag: a regular
// file (not a device, a fifo or a directory) of at most
// maxCredentialFile bytes, without its trailing newline.
func readCredential(flag, path string) (string, error) {
	if fi, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("flag %s: %w", flag, err)
	} else if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("flag %s: %s is not a regular file (%s)", flag, path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("flag %s: %w", flag, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() { // replaced since the Stat
		return "", fmt.Errorf("flag %s: %s is not a regular file", flag, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialFile+1))
	if err != nil {
		return "", fmt.Errorf("flag %s: %w", flag, err)
	}
	if len(b) > maxCredentialFile {
		return "", fmt.Errorf("flag %s: %s is larger than %d KiB: want the secret alone", flag, path, maxCredentialFile>>10)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("flag %s: %s is empty", flag, path)
	}
	return s, nil
}

// credentials reads the token or password files.
func (o *triageOptions) credentials() error {
	var err error
	if o.tokenFile != "" {
		if o.c.BearerToken, err = readCredential("--bearer-token-file", o.tokenFile); err != nil {
			return err
		}
	}
	if o.passFile != "" {
		if o.c.Password, err = readCredential("--password-file", o.passFile); err != nil {
			return err
		}
	}
	return nil
}
