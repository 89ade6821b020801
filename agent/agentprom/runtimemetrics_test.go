package agentprom

import (
	"math"
	"runtime"
	rtmetrics "runtime/metrics"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/latscope/latscope/agent"
)

// sink keeps the allocations of TestRuntimeMetrics alive until a GC.
var sink [][]byte

// TestRuntimeMetrics scrapes the runtime's accounts after forced
// collections: the cycles count at least the runtime's own count before
// the scrape (runtime.MemStats.NumGC), the collector used CPU, and the
// scheduler-latency histogram is cumulative and no larger than its count.
func TestRuntimeMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, Metrics: New(reg)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 5 {
		for range 1000 {
			sink = append(sink, make([]byte, 4096))
		}
		sink = nil
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fams := scrape(t, reg)
	value := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("%s: not scraped once: %v", name, f)
		}
		return f.Metric[0].GetCounter().GetValue()
	}
	if got := value("latscope_go_gc_cycles_total"); got < float64(ms.NumGC) {
		t.Errorf("latscope_go_gc_cycles_total %g, the runtime counted %d before the scrape", got, ms.NumGC)
	}
	if got := value("latscope_go_gc_cpu_seconds_total"); got <= 0 {
		t.Errorf("latscope_go_gc_cpu_seconds_total %g after %d collections", got, ms.NumGC)
	}
	if got := value("latscope_go_user_cpu_seconds_total"); got <= 0 {
		t.Errorf("latscope_go_user_cpu_seconds_total %g", got)
	}
	f := fams["latscope_go_sched_latency_seconds"]
	if f == nil || len(f.Metric) != 1 {
		t.Fatalf("latscope_go_sched_latency_seconds: not scraped once: %v", f)
	}
	h := f.Metric[0].GetHistogram()
	prev := uint64(0)
	for _, b := range h.GetBucket() {
		if b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
			t.Errorf("bucket %g: %d after %d, count %d: want cumulative, within the count", b.GetUpperBound(), b.GetCumulativeCount(), prev, h.GetSampleCount())
		}
		prev = b.GetCumulativeCount()
	}
	if h.GetSampleCount() == 0 {
		t.Error("no scheduling latency sampled")
	}
}

// TestRebucket: each runtime bucket counts under the first bound at or
// above its upper end, beyond the last bound only in the total; the sum
// takes the lower ends.
func TestRebucket(t *testing.T) {
	h := &rtmetrics.Float64Histogram{
		Counts:  []uint64{1, 2, 3, 4, 5},
		Buckets: []float64{math.Inf(-1), 0, 0.001, 0.004, 0.02, math.Inf(1)},
	}
	count, sum, cum := rebucket(h, []float64{0.001, 0.005, 0.01})
	if count != 15 {
		t.Errorf("count %d, want 15", count)
	}
	if want := 3*0.001 + 4*0.004 + 5*0.02; math.Abs(sum-want) > 1e-12 {
		t.Errorf("sum %g, want %g", sum, want)
	}
	for b, want := range map[float64]uint64{0.001: 3, 0.005: 6, 0.01: 6} {
		if cum[b] != want {
			t.Errorf("bucket %g: %d, want %d", b, cum[b], want)
		}
	}
}

// TestGCPauses: three forced collections raise the count of
// latscope_go_gc_pause_seconds by at least 3 (each cycle stops the world
// twice), and the histogram is cumulative within its count.
func TestGCPauses(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, ProbeEvery: -1, Metrics: New(reg)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	pauses := func() *dto.Histogram {
		f := scrape(t, reg)["latscope_go_gc_pause_seconds"]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("latscope_go_gc_pause_seconds: not scraped once: %v", f)
		}
		return f.Metric[0].GetHistogram()
	}
	before := pauses().GetSampleCount()
	for range 3 {
		runtime.GC()
	}
	h := pauses()
	if got := h.GetSampleCount() - before; got < 3 {
		t.Errorf("%d pauses counted over 3 collections, want at least 3", got)
	}
	prev := uint64(0)
	for _, b := range h.GetBucket() {
		if b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
			t.Errorf("bucket %g: %d after %d, count %d: want cumulative, within the count", b.GetUpperBound(), b.GetCumulativeCount(), prev, h.GetSampleCount())
		}
		prev = b.GetCumulativeCount()
	}
	bounds := map[float64]bool{}
	for _, b := range h.GetBucket() {
		bounds[b.GetUpperBound()] = true
	}
	for _, b := range pauseBuckets {
		if !bounds[b] {
			t.Errorf("no bucket le=%g", b)
		}
	}
}
