package agentprom

import (
	"math"
	rtmetrics "runtime/metrics"

	"github.com/prometheus/client_golang/prometheus"
)

// The Go runtime's own accounts of where the process's CPU went and how
// long its goroutines waited to run, read at scrape time from
// runtime/metrics (docs/metrics.md, "The Go runtime"): what tells a
// garbage collector that ate the process's CPU from CPU pressure of other
// work on the host, which the host counters alone cannot.
const (
	rmGCCPU     = "/cpu/classes/gc/total:cpu-seconds"
	rmUserCPU   = "/cpu/classes/user:cpu-seconds"
	rmGCCycles  = "/gc/cycles/total:gc-cycles"
	rmSchedWait = "/sched/latencies:seconds"
	// rmGCPause is the stop-the-world pauses for garbage collection (Go
	// 1.22 and later: two per cycle, sweep and mark termination).
	rmGCPause = "/sched/pauses/total/gc:seconds"
)

// schedBuckets are the upper bounds of latscope_sched_latency_seconds: a
// goroutine's wait to run lies between microseconds (an idle P) and tens
// of milliseconds (every P busy, or the process throttled).
var schedBuckets = []float64{10e-6, 50e-6, 100e-6, 250e-6, 500e-6, .001, .0025, .005, .01, .025, .05, .1}

// pauseBuckets are the upper bounds of latscope_go_gc_pause_seconds: a
// collection's stop-the-world pause is tens of microseconds on a healthy
// process, and milliseconds to a second when the process cannot get a
// CPU to stop its goroutines (throttled, or a host out of CPU).
var pauseBuckets = []float64{10e-6, 50e-6, 100e-6, 250e-6, 500e-6, .001, .0025, .005, .01, .025, .05, .1, .25, 1}

// runtimeCollector exports the runtime/metrics above; a metric the running
// Go does not have is left out of the scrape, never exported as 0.
type runtimeCollector struct {
	gcCPU, userCPU, gcCycles, schedWait, gcPause *prometheus.Desc
}

var _ prometheus.Collector = (*runtimeCollector)(nil)

func newRuntimeCollector() *runtimeCollector {
	return &runtimeCollector{
		gcCPU: prometheus.NewDesc("latscope_go_gc_cpu_seconds_total",
			"CPU time the Go runtime estimates its garbage collector used (runtime/metrics "+rmGCCPU+").", nil, nil),
		userCPU: prometheus.NewDesc("latscope_go_user_cpu_seconds_total",
			"CPU time the Go runtime estimates the program's own goroutines used (runtime/metrics "+rmUserCPU+"); with latscope_go_gc_cpu_seconds_total, the share the collector took.", nil, nil),
		gcCycles: prometheus.NewDesc("latscope_go_gc_cycles_total",
			"Completed garbage collection cycles (runtime/metrics "+rmGCCycles+").", nil, nil),
		schedWait: prometheus.NewDesc("latscope_go_sched_latency_seconds",
			"Time goroutines spent runnable before they ran (runtime/metrics "+rmSchedWait+"); the sum counts each of the runtime's buckets at its lower bound, a lower bound.", nil, nil),
		gcPause: prometheus.NewDesc("latscope_go_gc_pause_seconds",
			"Stop-the-world pauses of the garbage collector, two per cycle (runtime/metrics "+rmGCPause+"); the sum counts each of the runtime's buckets at its lower bound, a lower bound.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *runtimeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.gcCPU, c.userCPU, c.gcCycles, c.schedWait, c.gcPause} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one read of the five metrics.
func (c *runtimeCollector) Collect(ch chan<- prometheus.Metric) {
	s := []rtmetrics.Sample{{Name: rmGCCPU}, {Name: rmUserCPU}, {Name: rmGCCycles}, {Name: rmSchedWait}, {Name: rmGCPause}}
	rtmetrics.Read(s)
	for i, d := range []*prometheus.Desc{c.gcCPU, c.userCPU, c.gcCycles} {
		switch v := s[i].Value; v.Kind() {
		case rtmetrics.KindFloat64:
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v.Float64())
		case rtmetrics.KindUint64:
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v.Uint64()))
		}
	}
	if v := s[3].Value; v.Kind() == rtmetrics.KindFloat64Histogram {
		count, sum, buckets := rebucket(v.Float64Histogram(), schedBuckets)
		ch <- prometheus.MustNewConstHistogram(c.schedWait, count, sum, buckets)
	}
	if v := s[4].Value; v.Kind() == rtmetrics.KindFloat64Histogram {
		count, sum, buckets := rebucket(v.Float64Histogram(), pauseBuckets)
		ch <- prometheus.MustNewConstHistogram(c.gcPause, count, sum, buckets)
	}
}

// rebucket turns a runtime histogram into cumulative counts at bounds: a
// runtime bucket [lo, hi) counts under the first bound at or above hi
// (above every bound: only in the total), so no observation is counted
// below its value. The sum takes each bucket at its lower bound.
func rebucket(h *rtmetrics.Float64Histogram, bounds []float64) (count uint64, sum float64, cum map[float64]uint64) {
	cum = make(map[float64]uint64, len(bounds))
	per := make([]uint64, len(bounds))
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		count += n
		if !math.IsInf(lo, -1) && lo > 0 {
			sum += float64(n) * lo
		}
		for j, b := range bounds {
			if hi <= b {
				per[j] += n
				break
			}
		}
	}
	var run uint64
	for j, b := range bounds {
		run += per[j]
		cum[b] = run
	}
	return count, sum, cum
}
