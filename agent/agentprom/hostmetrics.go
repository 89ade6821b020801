package agentprom

import (
	"os"
	"sync"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/prometheus/client_golang/prometheus"
)

// hostCollector exports the host counters of the process, read at scrape
// time by a hostsig.Sampler: the CFS throttling of its cgroup (v1 or v2,
// summed with its ancestors below the root, as hostsig reads it), CPU PSI
// of its v2 cgroup and of the host, and the host's steal. A source that
// cannot be read is left out of the scrape, never exported as 0, and
// nothing is logged.
type hostCollector struct {
	mu sync.Mutex
	s  *hostsig.Sampler // nil when /proc cannot be read, or after close

	periods, throttled, throttledSeconds, pressure, steal *prometheus.Desc
}

var _ prometheus.Collector = (*hostCollector)(nil)

// newHostCollector opens the process's files (see hostsig.NewSampler).
func newHostCollector() *hostCollector {
	c := &hostCollector{
		periods: prometheus.NewDesc("latscope_cfs_periods_total",
			"CFS enforcement periods of the process's cgroup (with its ancestors below the root) in which it had runnable tasks.", nil, nil),
		throttled: prometheus.NewDesc("latscope_cfs_throttled_periods_total",
			"Of latscope_cfs_periods_total, the periods in which the cgroup ran out of quota.", nil, nil),
		throttledSeconds: prometheus.NewDesc("latscope_cfs_throttled_seconds_total",
			"Time the process's cgroup spent throttled, summed over CPUs.", nil, nil),
		pressure: prometheus.NewDesc("latscope_cpu_pressure_some_seconds_total",
			"CPU pressure stall information, some: time in which at least one task was runnable but not running; scope cgroup (the process's v2 cgroup) or host.", []string{"scope"}, nil),
		steal: prometheus.NewDesc("latscope_steal_seconds_total",
			"Steal time of the host, summed over its CPUs (/proc/stat).", nil, nil),
	}
	if s, err := hostsig.NewSampler(os.Getpid(), hostsig.Options{}); err == nil {
		c.s = s
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *hostCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.periods, c.throttled, c.throttledSeconds, c.pressure, c.steal} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one sample, the counters of the
// sources it could read.
func (c *hostCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if c.s == nil {
		c.mu.Unlock()
		return
	}
	smp, err := c.s.Sample()
	c.mu.Unlock()
	if err != nil {
		return
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	if smp.Has(hostsig.SourceThrottle) {
		counter(c.periods, float64(smp.Periods))
		counter(c.throttled, float64(smp.Throttled))
		counter(c.throttledSeconds, smp.ThrottledTime.Seconds())
	}
	if smp.Has(hostsig.SourceCgroupPSI) {
		counter(c.pressure, smp.CgroupSome.Seconds(), "cgroup")
	}
	if smp.Has(hostsig.SourceSystemPSI) {
		counter(c.pressure, smp.SystemSome.Seconds(), "host")
	}
	if smp.Has(hostsig.SourceSteal) {
		counter(c.steal, smp.Steal.Seconds())
	}
}

// close closes the sampler's files; later scrapes export nothing.
func (c *hostCollector) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s != nil {
		c.s.Close()
		c.s = nil
	}
}
