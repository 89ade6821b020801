package dbwait

import (
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/latscope/latscope/dbwait"
	"github.com/latscope/latscope/hostsig"
	"github.com/latscope/latscope/pglog"
	"github.com/latscope/latscope/tracein"
)

// joinCapture joins one run's trace with its part of the server log (the
// names are for errors), and returns dbwait's result together with the host samples
// the trace carries: those of the process dbwait classified with, in time
// order, for the report's throttling and pressure tracks.
func joinCapture(traceName string, trace io.Reader, pgName string, pg io.Reader) (*dbwait.Result, []hostsig.Sample, error) {
	a := dbwait.New(dbwait.Options{})
	tr, err := tracein.NewReader(traceName, trace)
	if err != nil {
		return nil, nil, err
	}
	var samples []hostsig.Sample
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		a.TraceEvent(ev)
		if ev.Kind == tracein.KindLog && ev.Name == dbwait.DefaultOptions.HostCategory {
			if s, err := hostsig.ParseLog(ev.Message); err == nil { // dbwait counts and reports the bad ones
				samples = append(samples, s)
			}
		}
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
