package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// CPUMetric is the Prometheus counter of process CPU time (utime+stime, in
// seconds) that client_golang's process collector exports.
const CPUMetric = "process_cpu_seconds_total"

// textFormat is what the capture asks /metrics for.
const textFormat = "text/plain;version=0.0.4"

// maxMetricsBytes bounds a /metrics answer.
const maxMetricsBytes = 32 << 20

// BuildInfoMetric is the gauge of the binary's build that client_golang's
// build-info collector (collectors.NewBuildInfoCollector) exports; its
// path label is the main module path.
const BuildInfoMetric = "go_build_info"

// scrape is what one /metrics answer says.
type scrape struct {
	cpu    float64
	module string // go_build_info's path label; "" when absent
	at     time.Time
}

// readMetrics fetches /metrics and returns CPUMetric's value, the main
// module and when it was read (the middle of the request). The error is
// about the CPU counter; the module is read even without it.
func readMetrics(ctx context.Context, f *fetcher, o Options) (scrape, error) {
	var buf bytes.Buffer
	start := time.Now()
	_, err := f.fetch(ctx, o.endpoint("/metrics"), "metrics", "the service exposes no Prometheus metrics there", &limitWriter{w: &buf, n: maxMetricsBytes}, textFormat)
	sc := scrape{at: start.Add(time.Since(start) / 2)}
	if err != nil {
		return sc, err
	}
	sc.cpu, sc.module, err = parseMetrics(bytes.NewReader(buf.Bytes()), expfmt.NewFormat(expfmt.TypeTextPlain))
	return sc, err
}

// ParseCPUSeconds reads metrics in the given exposition format and returns
// the value of CPUMetric (which must be a single series).
func ParseCPUSeconds(r io.Reader, format expfmt.Format) (float64, error) {
	v, _, err := parseMetrics(r, format)
	return v, err
}

// ParseMainModule reads metrics in the given exposition format and returns
// the path label of BuildInfoMetric: the service's main module, or "" when
// the metric is absent, names no module ("", "command-line-arguments") or
// names more than one.
func ParseMainModule(r io.Reader, format expfmt.Format) string {
	_, m, _ := parseMetrics(r, format)
	return m
}

// parseMetrics reads metrics in the given exposition format and returns
// the value of CPUMetric (which must be a single series) and the main
// module of BuildInfoMetric (see ParseMainModule). The error is about
// CPUMetric; what was parsed before a malformed line still counts.
func parseMetrics(r io.Reader, format expfmt.Format) (cpu float64, module string, err error) {
	dec := expfmt.NewDecoder(r, format)
	var cpuErr error
	found := false
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if err != nil {
			switch {
			case found:
				return cpu, module, cpuErr
			case errors.Is(err, io.EOF):
				return 0, module, fmt.Errorf("metrics: no %s (the service's registry has no process collector)", CPUMetric)
			default:
				return 0, module, fmt.Errorf("metrics: %w", err)
			}
		}
		switch mf.GetName() {
		case CPUMetric:
			if !found {
				found = true
				cpu, cpuErr = cpuValue(&mf)
				if cpuErr != nil {
					cpu = 0
				}
			}
		case BuildInfoMetric:
			module = buildInfoPath(&mf)
		}
	}
}

// cpuValue returns the value of the CPUMetric family mf.
func cpuValue(mf *dto.MetricFamily) (float64, error) {
	if len(mf.GetMetric()) != 1 {
		return 0, fmt.Errorf("metrics: %s has %d series, want 1", CPUMetric, len(mf.GetMetric()))
	}
	m := mf.GetMetric()[0]
	var v float64
	switch {
	case m.GetCounter() != nil:
		v = m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		v = m.GetUntyped().GetValue()
	case m.GetGauge() != nil:
		v = m.GetGauge().GetValue()
	default:
		return 0, fmt.Errorf("metrics: %s is a %v, want a counter", CPUMetric, mf.GetType())
	}
	if !(v >= 0) {
		return 0, fmt.Errorf("metrics: %s = %v, want a non-negative number", CPUMetric, v)
	}
	return v, nil
}

// buildInfoPath returns the one main module the BuildInfoMetric family mf
// names in its path labels, or "".
func buildInfoPath(mf *dto.MetricFamily) string {
	path := ""
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() != "path" {
				continue
			}
			switch p := strings.TrimSpace(l.GetValue()); {
			case p == "" || p == "command-line-arguments":
			case path == "":
				path = p
			case path != p:
				return "" // two modules: which one is the service?
			}
		}
	}
	return path
}

// limitWriter fails once more than n bytes were written.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("more than %d bytes", maxMetricsBytes)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
