package budget

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCapped(t *testing.T) {
	ms := time.Millisecond
	base := Throughput{Clients: 20, Cores: 2, CPUPerRequest: 4 * ms, CPUCap: 500}
	for _, c := range []struct {
		name       string
		t          Throughput
		mean, hold time.Duration
		want       float64
		limit      string
	}{
		{"Little's law", base, 160 * ms, 0, 125, "clients"},
		{"CPU cap", base, 20 * ms, 0, 500, "CPU (2 cores / 4 ms per request)"},
		{"pool cap", Throughput{Clients: 20, Cores: 2, CPUCap: 500, Pool: 10}, 100 * ms, 60 * ms, 1000.0 / 6, "pool (10 / 60 ms held)"},
		{"no requests", base, 0, 0, 0, "no requests"},
	} {
		got, limit := c.t.capped(c.mean, c.hold)
		if math.Abs(got-c.want) > 0.01 || !strings.HasPrefix(limit, c.limit) {
			t.Errorf("%s: capped = %v (%s), want %v (%s…)", c.name, got, limit, c.want, c.limit)
		}
	}
}

// TestCapQueues: a what-if whose simulated mean the cap cannot serve
// queues at the cap, by Little's law, and its p99 is dropped.
func TestCapQueues(t *testing.T) {
	g := &Group{Count: 10, Latency: Stats{Mean: float64(160 * time.Millisecond)}}
	tp := Throughput{Clients: 20, Cores: 2, CPUPerRequest: 10 * time.Millisecond, CPUCap: 200}
	for _, c := range []struct {
		name          string
		mean          time.Duration
		wantMean      time.Duration
		wantQueue     time.Duration
		p99Kept       bool
		wantDeltaPct  float64
		wantLimitHead string
	}{
		{"under the cap", 120 * time.Millisecond, 120 * time.Millisecond, 0, true, -25, "clients"},
		{"queues at the CPU cap", 50 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond, false, -37.5, "CPU"},
	} {
		p := PredictionResult{Prediction: Prediction{Spec: "remove=x", Op: OpRemove, A: "x"}, Mean: float64(c.mean), P99: int64(2 * c.mean)}
		got := g.Cap(&Result{}, tp, p)
		if got.Mean != c.wantMean || got.Queue != c.wantQueue || (got.P99 != 0) != c.p99Kept ||
			math.Abs(100*got.Delta-c.wantDeltaPct) > 1e-9 || !strings.HasPrefix(got.Limit, c.wantLimitHead) || got.Simulated != c.mean {
			t.Errorf("%s: %+v; want mean %v, queue %v, p99 kept %v, delta %v%%, limit %s…", c.name, got, c.wantMean, c.wantQueue, c.p99Kept, c.wantDeltaPct, c.wantLimitHead)
		}
	}
}

// TestCapQueuesPrometheus is the case measured on Prometheus: 19.6 clients,
// 3.77 ms simulated, a CPU cap of 532/s, 56.8 ms measured.
func TestCapQueuesPrometheus(t *testing.T) {
	g := &Group{Count: 1, Latency: Stats{Mean: 56.8e6}}
	tp := Throughput{Clients: 19.6, Cores: 2, CPUPerRequest: 3759 * time.Microsecond, CPUCap: 532}
	got := g.Cap(&Result{}, tp, PredictionResult{Mean: 3.77e6, P99: 9e6})
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
	if ms(got.Mean) != 36.842 || ms(got.Queue) != 33.072 || got.P99 != 0 || ms(got.Simulated) != 3.77 || math.Round(1e5*got.Delta)/1e3 != -35.137 {
		t.Errorf("capped: mean %v queue %v p99 %v simulated %v delta %v", got.Mean, got.Queue, got.P99, got.Simulated, got.Delta)
	}
}
