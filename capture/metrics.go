package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// readCPU fetches /metrics and returns CPUMetric's value and when it was
// read (the middle of the request).
func readCPU(ctx context.Context, f *fetcher, o Options) (float64, time.Time, error) {
	var buf bytes.Buffer
	start := time.Now()
	_, err := f.fetch(ctx, o.endpoint("/metrics"), "metrics", "the service exposes no Prometheus metrics there", &limitWriter{w: &buf, n: maxMetricsBytes}, textFormat)
	at := start.Add(time.Since(start) / 2)
	if err != nil {
		return 0, at, err
	}
	v, err := ParseCPUSeconds(bytes.NewReader(buf.Bytes()), expfmt.NewFormat(expfmt.TypeTextPlain))
	return v, at, err
}

// ParseCPUSeconds reads metrics in the given exposition format and returns
// the value of CPUMetric (which must be a single series).
func ParseCPUSeconds(r io.Reader, format expfmt.Format) (float64, error) {
	dec := expfmt.NewDecoder(r, format)
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("metrics: no %s (the service's registry has no process collector)", CPUMetric)
		}
		if err != nil {
			return 0, fmt.Errorf("metrics: %w", err)
		}
		if mf.GetName() != CPUMetric {
			continue
		}
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
