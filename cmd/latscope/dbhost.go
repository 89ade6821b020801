package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pgcluster"
)

func init() {
	cli.Register("dbhost", "on the database's host: record each PostgreSQL backend's run-queue wait, for dbwait --dbhost", runDBHost)
}

const dbhostSynopsis = "dbhost (--pgdata DIR | --pid PID) -o FILE [--period D] [--for D]"

const dbhostExamples = `
examples:
  latscope dbhost --pgdata /var/lib/postgresql/15/main -o dbhost.txt         until Ctrl-C
  latscope dbhost --pid 812 -o dbhost.txt --for 60s
  latscope dbwait --pglog postgresql.json --dbhost dbhost.txt trace.out
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
		if o.rec.Parent, err = pgcluster.PostmasterPID(o.pgdata); err != nil {
			return fmt.Errorf("--pgdata: %w", err)
		}
	}
	comm, err := dbhost.Command(o.rec.Parent)
	switch {
	case err != nil && o.pgdata != "":
		return fmt.Errorf("--pgdata: postmaster.pid names PID %d, which is not running: is the server running?", o.rec.Parent)
	case err != nil:
		return fmt.Errorf("--pid: %w", err)
	case comm != "postgres" && comm != "postmaster":
		fmt.Fprintf(stderr, "latscope dbhost: warning: PID %d is %q, not PostgreSQL's postmaster: its children are recorded all the same\n", o.rec.Parent, comm)
	}
	if o.dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.dur)
		defer cancel()
	}
	fmt.Fprintf(stderr, "recording the run-queue wait of PID %d's children every %v into %s (Ctrl-C stops)\n", o.rec.Parent, o.rec.Period, o.out)
	start, cpu0 := time.Now(), hostsig.SelfCPU()
	var exited error
	err = atomicfile.Write(o.out, func(w io.Writer) error {
		err := o.rec.Run(ctx, w)
		if errors.Is(err, dbhost.ErrParentExited) {
			exited, err = err, nil // what was recorded is kept
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("dbhost: %w", err)
	}
	if exited != nil {
		fmt.Fprintf(stderr, "latscope dbhost: warning: %v: the recording ends there\n", exited)
	}
	wall, cpu := time.Since(start), hostsig.SelfCPU()-cpu0
	fmt.Fprintf(stderr, "wrote %s: %.1f s recorded; the recorder used %.0f ms of CPU (%.2f %% of one core)\n",
		o.out, wall.Seconds(), float64(cpu)/1e6, 100*cpu.Seconds()/wall.Seconds())
	return nil
}

func parseDBHost(stderr io.Writer, args []string) (*dbhostOptions, error) {
	o := &dbhostOptions{rec: dbhost.Recorder{Period: dbhost.DefaultPeriod}}
	fs := cli.NewFlagSet("dbhost", dbhostSynopsis, stderr)
	fs.StringVar(&o.pgdata, "pgdata", "", "PostgreSQL data `DIR`: its postmaster.pid names the process whose children (the backends) are recorded")
	fs.IntVar(&o.rec.Parent, "pid", 0, "`PID` whose children are recorded (PostgreSQL's postmaster), instead of --pgdata")
	fs.StringVar(&o.out, "o", "", "recording `FILE` (written when the recording ends; alias --out)")
	fs.StringVar(&o.out, "out", "", "same as -o")
	fs.DurationVar(&o.rec.Period, "period", o.rec.Period, "sampling period: a wait is placed to within one period")
	fs.DurationVar(&o.dur, "for", 0, "stop after this long (0: at Ctrl-C)")
	cli.UsageWith(fs, stderr, dbhostSynopsis, dbhostExamples)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.pgdata != "" && o.rec.Parent != 0:
		return nil, errors.New("give --pgdata DIR or --pid PID, not both")
	case o.pgdata == "" && o.rec.Parent == 0:
		return nil, errors.New("give --pgdata DIR (the PostgreSQL data directory) or --pid PID (the postmaster's)")
	case o.rec.Parent < 0:
		return nil, fmt.Errorf("flag --pid %d: want a positive PID", o.rec.Parent)
	case o.out == "":
		return nil, errors.New("flag -o is required")
	case o.rec.Period < time.Millisecond:
		return nil, fmt.Errorf("flag --period %v: want 1ms or more", o.rec.Period)
	case o.dur < 0:
		return nil, fmt.Errorf("flag --for %v: want a positive duration", o.dur)
	}
	return o, nil
}
