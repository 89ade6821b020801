package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/latscope/latscope/dbhost"
	"github.com/latscope/latscope/internal/atomicfile"
)

func init() {
	register("dbhost", "on the database's host: record each PostgreSQL backend's run-queue wait, for dbwait --dbhost", runDBHost)
}

const dbhostSynopsis = "dbhost (--pgdata DIR | --pid PID) --out FILE [--period D] [--for D]"

const dbhostExamples = `
examples:
  latscope dbhost --pgdata /var/lib/postgresql/15/main --out dbhost.txt       until Ctrl-C
  latscope dbhost --pid 812 --out dbhost.txt --for 60s
  latscope dbwait --trace trace.out --pglog postgresql.json --dbhost dbhost.txt
Run it on the database's host, as a user that may read the backends' /proc/PID/schedstat
(the postgres user or root), over the same time as the trace.
`

// dbhostOptions are the flags of `latscope dbhost`.
type dbhostOptions struct {
	pgdata, out string
	rec         dbhost.Recorder
	dur         time.Duration
}

func runDBHost(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o, err := parseDBHost(stderr, args)
	if err != nil {
		return err
	}
	if o.pgdata != "" {
		if o.rec.Parent, err = dbhost.PostmasterPID(o.pgdata); err != nil {
			return fmt.Errorf("--pgdata: %w", err)
		}
	}
	if o.dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.dur)
		defer cancel()
	}
	fmt.Fprintf(stderr, "recording the run-queue wait of PID %d's children every %v into %s (Ctrl-C stops)\n", o.rec.Parent, o.rec.Period, o.out)
	err = atomicfile.Write(o.out, func(w io.Writer) error { return o.rec.Run(ctx, w) })
	if err != nil {
		return fmt.Errorf("dbhost: %w", err)
	}
	fmt.Fprintf(stderr, "wrote %s\n", o.out)
	return nil
}

func parseDBHost(stderr io.Writer, args []string) (*dbhostOptions, error) {
	o := &dbhostOptions{rec: dbhost.Recorder{Period: dbhost.DefaultPeriod}}
	fs := newFlagSet("dbhost", dbhostSynopsis, stderr)
	fs.StringVar(&o.pgdata, "pgdata", "", "PostgreSQL data `DIR`: its postmaster.pid names the process whose children (the backends) are recorded")
	fs.IntVar(&o.rec.Parent, "pid", 0, "`PID` whose children are recorded (PostgreSQL's postmaster), instead of --pgdata")
	fs.StringVar(&o.out, "out", "", "recording `FILE` (written when the recording ends)")
	fs.DurationVar(&o.rec.Period, "period", o.rec.Period, "sampling period: a wait is placed to within one period")
	fs.DurationVar(&o.dur, "for", 0, "stop after this long (0: at Ctrl-C)")
	usageWith(fs, stderr, dbhostSynopsis, dbhostExamples)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case (o.pgdata == "") == (o.rec.Parent == 0):
		return nil, errors.New("give one of --pgdata DIR or --pid PID")
	case o.rec.Parent < 0:
		return nil, fmt.Errorf("flag --pid %d: want a positive PID", o.rec.Parent)
	case o.out == "":
		return nil, errors.New("flag --out is required")
	case o.rec.Period < time.Millisecond:
		return nil, fmt.Errorf("flag --period %v: want 1ms or more", o.rec.Period)
	case o.dur < 0:
		return nil, fmt.Errorf("flag --for %v: want a positive duration", o.dur)
	}
	return o, nil
}
