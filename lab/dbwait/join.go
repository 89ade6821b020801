package dbwait

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/tracein"
)

// joinCapture joins one run's trace with its part of the server log (the
// names are for errors), and returns dbwait's result together with the host samples
// the trace carries: those of the process dbwait classified with, in time
// order, for the report's throttling and pressure tracks.
func joinCapture(traceName string, trace io.Reader, pgName string, pg io.Reader, dbh *dbhost.Waits, opts dbwait.Options) (*dbwait.Result, []hostsig.Sample, error) {
	a := dbwait.New(opts)
	if dbh != nil {
		a.DBHost(dbh)
	}
	var samples hostLogs
	if _, err := analysis.Run(context.Background(), traceName, trace, analysis.Options{}, analysis.Use(a), analysis.Use(&samples)); err != nil {
		return nil, nil, err
	}
	if err := dbwait.FeedPGLog(a, pglog.NewReader(pg)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", pgName, err)
	}
	res, err := a.Finalize()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", traceName, err)
	}
	return res, oneProcess(samples), nil
}

// readDBHost reads the database host's recording of a run (gzipped when
// its name ends in .gz, as a kept run's is).
func readDBHost(name string) (*dbhost.Waits, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r = zr
	}
	return dbhost.Read(name, r)
}

// hostLogs collects the host samples a trace carries (the bad ones are
// dbwait's to count and report).
type hostLogs []hostsig.Sample

// Event takes one record of the trace.
func (h *hostLogs) Event(ev *tracein.Event) {
	if ev.Kind == tracein.KindLog && ev.Name == dbwait.DefaultOptions.HostCategory {
		if s, err := hostsig.ParseLog(ev.Message); err == nil {
			*h = append(*h, s)
		}
	}
}

// oneProcess keeps the samples of the first sample's process, in time
// order, without duplicates: the ones dbwait uses (Options.PID 0).
func oneProcess(samples []hostsig.Sample) []hostsig.Sample {
	if len(samples) == 0 {
		return nil
	}
	pid := samples[0].PID
	out := slices.DeleteFunc(slices.Clone(samples), func(s hostsig.Sample) bool { return s.PID != pid })
	sort.SliceStable(out, func(i, j int) bool { return out[i].Mono < out[j].Mono })
	return slices.CompactFunc(out, func(x, y hostsig.Sample) bool { return x.Mono == y.Mono })
}
