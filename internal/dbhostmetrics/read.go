// Package dbhostmetrics reads a database host's CPU pressure from the
// Prometheus that scrapes the host's node_exporter, for dbwait: without
// a recording of the database's backends (latscope dbhost), the host's
// own pressure decides whether a network verdict is hedged with db-cpu
// (docs/dbwait.md, "The database host's metrics").
package dbhostmetrics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/triage"
)

// Metric is node_exporter's counter of Linux PSI "some" for the CPU: the
// seconds at least one task on the host waited for a CPU.
const Metric = "node_pressure_cpu_waiting_seconds_total"

// MaxRange bounds the window read: a trace is minutes long, and a day
// of 1 s scrapes is 86,400 samples.
const MaxRange = 24 * time.Hour

// ErrNoSeries is returned when Prometheus holds no series of Metric for
// the window (and instance).
var ErrNoSeries = errors.New("no series")

// Read returns the pressure counter of the node_exporter instance
// (its instance label; "" when Prometheus scrapes only one that exports
// the counter) from from to to, as scraped. The errors say what to give
// instead: the instances there are when there is more than one, or why
// there may be none.
func Read(ctx context.Context, cl *triage.Client, instance string, from, to time.Time) (*dbwait.Pressure, error) {
	if to.Sub(from) > MaxRange {
		return nil, fmt.Errorf("the window %s to %s is longer than %v", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), MaxRange)
	}
	selector := Metric
	if instance != "" {
		selector += "{instance=" + strconv.Quote(instance) + "}"
	}
	m, _, err := cl.RawSamples(ctx, selector, from, to)
	if err != nil {
		return nil, err
	}
	switch {
	case len(m) == 0:
		return nil, fmt.Errorf("Prometheus at %s holds %w of %s from %s to %s: is the database host's node_exporter scraped there%s? (its pressure collector needs a kernel with PSI, /proc/pressure/cpu)",
			cl.URL(), ErrNoSeries, selector, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), instanceHint(instance))
	case len(m) > 1:
		return nil, fmt.Errorf("Prometheus at %s holds %s of %d instances (%s): name the database host's with --dbhost-instance", cl.URL(), Metric, len(m), instances(m))
	}
	s := m[0]
	p := &dbwait.Pressure{Source: fmt.Sprintf("%s{instance=%q} from Prometheus at %s", Metric, string(s.Metric[model.InstanceLabel]), cl.URL())}
	for _, v := range s.Values {
		f := float64(v.Value)
		if f != f || f < 0 || f > 1e12 { // NaN, or not a counter of seconds
			return nil, fmt.Errorf("Prometheus at %s: %s at %s is %v: not a counter of seconds", cl.URL(), Metric, v.Timestamp.Time().UTC().Format(time.RFC3339), f)
		}
		p.Samples = append(p.Samples, dbwait.PressureSample{At: v.Timestamp.Time(), Some: time.Duration(f * float64(time.Second))})
	}
	return p, nil
}

// instanceHint adds, when an instance was named, that the label may be
// spelt otherwise.
func instanceHint(instance string) string {
	if instance == "" {
		return ""
	}
	return ", and is its instance label " + strconv.Quote(instance) + " (e.g. host:9100)"
}

// instances lists the series' instance labels, sorted.
func instances(m model.Matrix) string {
	var names []string
	for _, s := range m {
		names = append(names, strconv.Quote(string(s.Metric[model.InstanceLabel])))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
