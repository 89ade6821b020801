package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/latscope/latscope/analysis"
	"github.com/latscope/latscope/dbhost"
	"github.com/latscope/latscope/dbwait"
	"github.com/latscope/latscope/pglog"
)

func init() {
	register("dbwait", "join app DB spans of a trace with the database's own statement times; classify time outside the DB (throttled, steal, paused, network)", runDBWait)
}

const dbwaitSynopsis = "dbwait --trace TRACE --pglog postgresql.json [flags]"

const dbwaitExamples = `
examples:
  latscope dbwait --trace trace.out --pglog postgresql.json
  latscope dbwait --trace trace.out --pglog postgresql.json --samples host.txt --threshold 5ms
  latscope dbwait --trace trace.out --pglog postgresql.json --dbhost dbhost.txt   (recorded by latscope dbhost)
  latscope dbwait --trace trace.out --mysql-csv history_long.csv --json
  latscope dbwait --trace trace.out --mysql-slowlog /var/log/mysql/slow.log
  latscope lab dbwait              the lab conditions behind the method (lock, pause, CFS quota, proxy)
`

// dbwaitOptions are the flags of `latscope dbwait`.
type dbwaitOptions struct {
	trace            string
	pglogs, mysqlCSV stringList
	mysqlSlow        stringList
	samples, dbhost  string
	json, all        bool
	opts             dbwait.Options
}

func runDBWait(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o, err := parseDBWait(stderr, args)
	if err != nil {
		return err
	}
	res, err := dbwaitAnalyze(ctx, o)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "latscope dbwait: warning: %v\n", w)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res.JSON())
	}
	return dbwait.WriteText(stdout, res, dbwait.TextOptions{All: o.all})
}

func parseDBWait(stderr io.Writer, args []string) (*dbwaitOptions, error) {
	o := &dbwaitOptions{opts: dbwait.DefaultOptions}
	fs := newFlagSet("dbwait", dbwaitSynopsis, stderr)
	fs.StringVar(&o.trace, "trace", "", "Go execution `TRACE` with DB regions and latscope.sql logs (required)")
	fs.Var(&o.pglogs, "pglog", "PostgreSQL jsonlog `FILE` (repeatable, e.g. rotated files)")
	fs.Var(&o.mysqlCSV, "mysql-csv", "`FILE`: CSV or mysql --batch export of performance_schema.events_statements_history_long (repeatable)")
	fs.Var(&o.mysqlSlow, "mysql-slowlog", "MySQL or MariaDB slow query `FILE` written with long_query_time=0 (repeatable)")
	fs.StringVar(&o.samples, "samples", "", "host samples `FILE` (hostsig text lines), used instead of the trace's latscope.host logs")
	fs.StringVar(&o.dbhost, "dbhost", "", "recording `FILE` of the database host's backends' run-queue waits (latscope dbhost), to name the database host's CPU")
	fs.DurationVar(&o.opts.Threshold, "threshold", o.opts.Threshold, "difference (app − DB) above which time is outside the DB")
	fs.DurationVar(&o.opts.MinPause, "min-pause", o.opts.MinPause, "shortest stretch without trace events taken as a paused process")
	fs.DurationVar(&o.opts.PGClockOffset, "pg-clock-offset", 0, "how far the database host's clock is ahead of the traced host's")
	fs.BoolVar(&o.all, "all", false, "list every statement, not only those outside the DB")
	fs.BoolVar(&o.json, "json", false, "print JSON instead of text")
	usageWith(fs, stderr, dbwaitSynopsis, dbwaitExamples)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.opts.NoTraceSamples = o.samples != "" // the file replaces the trace's samples
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q (the trace goes in --trace)", fs.Arg(0))
	case o.trace == "":
		return nil, errors.New("flag --trace is required")
	case len(o.pglogs) == 0 && len(o.mysqlCSV) == 0 && len(o.mysqlSlow) == 0:
		return nil, errors.New("give the database's statement log: --pglog FILE (PostgreSQL jsonlog), --mysql-slowlog FILE or --mysql-csv FILE")
	case o.dbhost != "" && (len(o.mysqlCSV) > 0 || len(o.mysqlSlow) > 0):
		return nil, errors.New("flag --dbhost: a recording of PostgreSQL's backends, which MySQL and MariaDB (one process, a thread per connection) do not have: leave it out with --mysql-csv or --mysql-slowlog")
	case o.opts.Threshold <= 0:
		return nil, fmt.Errorf("flag --threshold %v: want a positive duration", o.opts.Threshold)
	case o.opts.MinPause <= 0:
		return nil, fmt.Errorf("flag --min-pause %v: want a positive duration", o.opts.MinPause)
	}
	return o, nil
}

// dbwaitAnalyze reads the inputs into an Analyzer and finalizes it.
func dbwaitAnalyze(ctx context.Context, o *dbwaitOptions) (*dbwait.Result, error) {
	a := dbwait.New(o.opts)
	if err := checkInput(o.trace, "file"); err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	if _, err := analysis.RunFile(ctx, o.trace, analysis.Options{}, analysis.Use(a)); err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	if o.samples != "" {
		if err := feedFile(o.samples, func(f *os.File) error { return dbwait.ReadSamples(o.samples, f, a.Sample) }); err != nil {
			return nil, fmt.Errorf("--samples: %w", err)
		}
	}
	if o.dbhost != "" {
		if err := feedFile(o.dbhost, func(f *os.File) error {
			w, err := dbhost.Read(o.dbhost, f)
			if err != nil {
				return err
			}
			a.DBHost(w)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("--dbhost: %w", err)
		}
	}
	for _, name := range o.pglogs {
		if err := feedFile(name, func(f *os.File) error {
			if err := dbwait.FeedPGLog(a, pglog.NewReader(f)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("--pglog: %w", err)
		}
	}
	for _, name := range o.mysqlSlow {
		if err := feedFile(name, func(f *os.File) error { return dbwait.ReadMySQLSlowLog(name, f, a.Statement) }); err != nil {
			return nil, fmt.Errorf("--mysql-slowlog: %w", err)
		}
	}
	for _, name := range o.mysqlCSV {
		if err := feedFile(name, func(f *os.File) error { return dbwait.ReadMySQLCSV(name, f, a.Statement) }); err != nil {
			return nil, fmt.Errorf("--mysql-csv: %w", err)
		}
	}
	res, err := a.Finalize()
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return res, nil
}

// feedFile opens name and passes it to fn. A directory is refused before
// a reader takes it for an empty file.
func feedFile(name string, fn func(*os.File) error) error {
	if err := checkInput(name, "file"); err != nil {
		return err
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}
