package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/dbhostmetrics"
	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/report/dbwaitreport"
	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/triage"
)

func init() {
	cli.Register("dbwait", "join app DB spans of a trace with the database's own statement times; classify time outside the DB (throttled, steal, paused, network)", runDBWait)
}

const dbwaitSynopsis = "dbwait [flags] --pglog postgresql.json TRACE"

const dbwaitExamples = `
examples:
  latscope dbwait --pglog postgresql.json trace.out
  latscope dbwait --pglog postgresql.json --samples host.txt --threshold 5ms trace.out
  latscope dbwait --pglog postgresql.json --dbhost dbhost.txt trace.out   (recorded by latscope dbhost)
  latscope dbwait --pglog postgresql.json --dbhost-prometheus http://prom:9090 --dbhost-instance db1:9100 trace.out
                                   (the database host's CPU pressure from its node_exporter, when no recording was taken)
  latscope dbwait --mysql-csv history_long.csv --json -o dbwait.json trace.out
  latscope dbwait --mysql-slowlog /var/log/mysql/slow.log trace.out
  latscope-lab dbwait              the lab conditions behind the method (lock, pause, CFS quota, proxy)
`

// dbwaitOptions are the flags of `latscope dbwait`.
type dbwaitOptions struct {
	trace            string
	pglogs, mysqlCSV stringList
	mysqlSlow        stringList
	samples, dbhost  string
	// prom is the Prometheus that scrapes the database host's
	// node_exporter (--dbhost-prometheus), promInstance its instance
	// label, promToken and promPass credential files.
	prom                triage.Config
	promInstance        string
	promToken, promPass string
	json, all           bool
	out                 cli.ReportFile
	opts                dbwait.Options
}

func runDBWait(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o, err := parseDBWait(stderr, args)
	if err != nil {
		return err
	}
	if err := o.out.Check(o.inputs(), nil); err != nil {
		return err
	}
	res, err := dbwaitAnalyze(ctx, o)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "latscope dbwait: warning: %s\n", termsafe.String(w.Error())) // warnings quote the logs and the trace
	}
	return o.out.Write(stdout, func(w io.Writer) error {
		if o.json {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(dbwaitreport.JSON(res))
		}
		return dbwaitreport.WriteText(w, res, dbwaitreport.TextOptions{All: o.all})
	})
}

// inputs lists the files dbwait reads, which -o must not name.
func (o *dbwaitOptions) inputs() []string {
	in := append([]string{o.trace, o.samples, o.dbhost}, o.pglogs...)
	in = append(in, o.mysqlCSV...)
	return append(in, o.mysqlSlow...)
}

func parseDBWait(stderr io.Writer, args []string) (*dbwaitOptions, error) {
	o := &dbwaitOptions{opts: dbwait.DefaultOptions}
	fs := cli.NewFlagSet("dbwait", dbwaitSynopsis, stderr)
	fs.StringVar(&o.trace, "trace", "", "the same as the `TRACE` argument (the form of earlier versions)")
	fs.Var(&o.pglogs, "pglog", "PostgreSQL jsonlog `FILE` (repeatable, e.g. rotated files)")
	fs.Var(&o.mysqlCSV, "mysql-csv", "`FILE`: CSV or mysql --batch export of performance_schema.events_statements_history_long (repeatable)")
	fs.Var(&o.mysqlSlow, "mysql-slowlog", "MySQL or MariaDB slow query `FILE` written with long_query_time=0 (repeatable)")
	fs.StringVar(&o.samples, "samples", "", "host samples `FILE` (hostsig text lines), used instead of the trace's latscope.host logs")
	fs.StringVar(&o.dbhost, "dbhost", "", "recording `FILE` of the database host's backends' run-queue waits (latscope dbhost), to name the database host's CPU")
	fs.StringVar(&o.prom.URL, "dbhost-prometheus", "", "Prometheus base `URL` that scrapes the database host's node_exporter: its CPU pressure (PSI) decides, without --dbhost, whether a network verdict may be the database host's CPU")
	fs.StringVar(&o.promInstance, "dbhost-instance", "", "the database host's node_exporter `INSTANCE` label (e.g. db1:9100); needed when Prometheus scrapes several")
	fs.StringVar(&o.promToken, "prometheus-bearer-token-file", "", "read a bearer token for --dbhost-prometheus from `FILE`")
	fs.StringVar(&o.prom.Username, "prometheus-user", "", "basic-auth `USER` for --dbhost-prometheus (with --prometheus-password-file)")
	fs.StringVar(&o.promPass, "prometheus-password-file", "", "read the basic-auth password for --dbhost-prometheus from `FILE`")
	fs.DurationVar(&o.opts.Threshold, "threshold", o.opts.Threshold, "difference (app − DB) above which time is outside the DB")
	fs.DurationVar(&o.opts.MinPause, "min-pause", o.opts.MinPause, "shortest stretch without trace events taken as a paused process")
	fs.DurationVar(&o.opts.PGClockOffset, "pg-clock-offset", 0, "how far the database host's clock is ahead of the traced host's")
	fs.BoolVar(&o.all, "all", false, "list every statement, not only those outside the DB")
	fs.BoolVar(&o.json, "json", false, "print JSON instead of text")
	o.out.Register(fs)
	cli.UsageWith(fs, stderr, dbwaitSynopsis, dbwaitExamples)
	pos, err := fs.ParseInterleaved(args)
	if err != nil {
		return nil, err
	}
	o.opts.NoTraceSamples = o.samples != "" // the file replaces the trace's samples
	switch {
	case len(pos) > 1 || len(pos) == 1 && o.trace != "":
		return nil, fmt.Errorf("unexpected argument %q: want one trace (a Go execution trace with DB regions and latscope.sql logs)", pos[len(pos)-1])
	case len(pos) == 1:
		o.trace = pos[0]
	}
	switch {
	case o.trace == "":
		return nil, errors.New("want the Go execution trace (with DB regions and latscope.sql logs) as the argument: latscope dbwait --pglog FILE TRACE")
	case len(o.pglogs) == 0 && len(o.mysqlCSV) == 0 && len(o.mysqlSlow) == 0:
		return nil, errors.New("give the database's statement log: --pglog FILE (PostgreSQL jsonlog), --mysql-slowlog FILE or --mysql-csv FILE")
	case o.dbhost != "" && (len(o.mysqlCSV) > 0 || len(o.mysqlSlow) > 0):
		return nil, errors.New("flag --dbhost: a recording of PostgreSQL's backends, which MySQL and MariaDB (one process, a thread per connection) do not have: leave it out with --mysql-csv or --mysql-slowlog")
	case o.prom.URL == "" && (o.promInstance != "" || o.promToken != "" || o.prom.Username != "" || o.promPass != ""):
		return nil, errors.New("flags --dbhost-instance and --prometheus-*: they go with --dbhost-prometheus URL")
	case o.promToken != "" && (o.prom.Username != "" || o.promPass != ""):
		return nil, errors.New("flag --prometheus-bearer-token-file: a bearer token or basic auth (--prometheus-user, --prometheus-password-file), not both")
	case o.promPass != "" && o.prom.Username == "":
		return nil, errors.New("flag --prometheus-password-file: give --prometheus-user too")
	case o.opts.Threshold <= 0:
		return nil, fmt.Errorf("flag --threshold %v: want a positive duration", o.opts.Threshold)
	case o.opts.MinPause <= 0:
		return nil, fmt.Errorf("flag --min-pause %v: want a positive duration", o.opts.MinPause)
	}
	return o, nil
}

// dbwaitAnalyze reads the inputs into an Analyzer and finalizes it. When
// ctx is done (SIGINT, SIGTERM) it stops reading, within a read of at most
// 64 KiB or at once from a pipe that sends nothing, and returns an error
// that says so.
func dbwaitAnalyze(ctx context.Context, o *dbwaitOptions) (*dbwait.Result, error) {
	a := dbwait.New(o.opts)
	if err := checkInput(o.trace, "trace file"); err != nil {
		return nil, err // the trace reader names the file
	}
	if _, err := analysis.RunFile(ctx, o.trace, analysis.Options{}, analysis.Use(a)); err != nil {
		return nil, interrupted(ctx, err)
	}
	if err := a.CheckSpans(); err != nil {
		return nil, err // before reading logs nothing could join
	}
	if o.samples != "" {
		if err := feedFile(ctx, "--samples", o.samples, func(r io.Reader) error { return dbwait.ReadSamples(o.samples, r, a.Sample) }); err != nil {
			return nil, err
		}
	}
	if o.dbhost != "" {
		if err := feedFile(ctx, "--dbhost", o.dbhost, func(r io.Reader) error {
			from, to, _ := a.DBHostWindow() // zero: all of it
			w, err := dbhost.ReadWindow(ctx, o.dbhost, r, from, to)
			if err != nil {
				return err
			}
			a.DBHost(w)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if o.prom.URL != "" {
		if err := dbhostPressure(ctx, o, a); err != nil {
			return nil, interrupted(ctx, fmt.Errorf("--dbhost-prometheus: %w", err))
		}
	}
	for _, name := range o.pglogs {
		if err := feedFile(ctx, "--pglog", name, func(r io.Reader) error {
			if err := a.ReadPGLog(ctx, name, r); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for _, name := range o.mysqlSlow {
		if err := feedFile(ctx, "--mysql-slowlog", name, func(r io.Reader) error { return a.ReadMySQLSlowLog(ctx, name, r) }); err != nil {
			return nil, err
		}
	}
	for _, name := range o.mysqlCSV {
		if err := feedFile(ctx, "--mysql-csv", name, func(r io.Reader) error { return a.ReadMySQLCSV(ctx, name, r) }); err != nil {
			return nil, err
		}
	}
	res, err := a.Finalize()
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return res, nil
}

// dbhostPressure reads the database host's CPU pressure counter over the
// trace's time (a minute wider each side) from --dbhost-prometheus and
// gives it to a.
func dbhostPressure(ctx context.Context, o *dbwaitOptions, a *dbwait.Analyzer) error {
	from, to, ok := a.DBHostWindow()
	if !ok {
		return errors.New("the trace has no clock snapshot (Go 1.25 or later writes them), so its statements have no wall-clock time to read the database host's samples at")
	}
	c := o.prom
	var err error
	if o.promToken != "" {
		if c.BearerToken, err = readCredential("--prometheus-bearer-token-file", o.promToken); err != nil {
			return err
		}
	}
	if o.promPass != "" {
		if c.Password, err = readCredential("--prometheus-password-file", o.promPass); err != nil {
			return err
		}
	}
	cl, err := triage.NewClient(c)
	if err != nil {
		return err
	}
	p, err := dbhostmetrics.Read(ctx, cl, o.promInstance, from, to)
	if err != nil {
		return err
	}
	a.DBHostPressure(p)
	return nil
}

// feedFile opens name (the argument of flag) and passes it to fn, through
// a reader that fails once ctx is done; a read that waits on a pipe or FIFO
// is cut short then. A directory is refused before a reader takes it for
// an empty file. Errors start with the flag; an error after ctx is done
// says the read was interrupted.
func feedFile(ctx context.Context, flag, name string, fn func(io.Reader) error) error {
	err := func() error {
		if err := checkInput(name, "file"); err != nil {
			return err
		}
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) }) // a pipe, a FIFO; a regular file has no deadline and never waits
		defer stop()
		return fn(ctxReader{ctx, f})
	}()
	if err != nil {
		return interrupted(ctx, fmt.Errorf("%s: %w", flag, err))
	}
	return nil
}

// interrupted is err, or when ctx is done, err (which names the flag, the
// file and how far it was read) said to be an interruption.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("interrupted reading %w", err)
}

// ctxReader is r until ctx is done, then fails with ctx's error.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
