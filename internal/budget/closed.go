package budget

import (
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/units"
)

// The closed model of docs/method.md §5: throughput is clients / mean
// latency, capped by cores / CPU per request and by pool size / the time a
// pooled connection is held; a prediction's mean follows its throughput by
// Little's law when a cap holds it below the clients' own rate.

// Capacity is what the closed model needs beside the trace.
type Capacity struct {
	// Clients is the closed-model client count; 0 estimates it from the
	// trace (Σ latency / window, Little's law).
	Clients float64
	// Cores is the CPU capacity; 0 takes GOMAXPROCS from the trace.
	Cores float64
	// Pool is a connection-pool size; 0 means no pool cap.
	Pool int
	// CPUPerRequest is CPU per request from an independent counter; 0
	// takes the trace's running time per request.
	CPUPerRequest time.Duration
}

// Throughput is a group's closed-model throughput: the inputs it used, the
// caps, and what the trace measured.
type Throughput struct {
	Clients          float64
	ClientsEstimated bool
	Cores            float64
	CPUPerRequest    time.Duration
	CPUCap           float64 // requests per second the cores allow; 0 unknown
	Pool             int
	PoolHold         time.Duration // per request; 0 without a pool or a pool wait
	PoolCap          float64       // requests per second the pool allows; 0 none
	Measured         float64       // requests per second in the trace
	Predicted        float64       // the closed model's, for the trace as recorded
	Limit            string        // what limits Predicted, in words
}

// Closed returns g's closed-model throughput with the capacity c.
func (g *Group) Closed(res *Result, c Capacity) Throughput {
	t := Throughput{Clients: c.Clients, Cores: c.Cores, Pool: c.Pool, CPUPerRequest: c.CPUPerRequest}
	d := res.Info.Duration()
	if d > 0 {
		t.Measured = float64(g.Count) / (float64(d) / 1e9)
	}
	if t.Clients <= 0 && d > 0 {
		var sum float64
		for _, l := range g.Latencies {
			sum += float64(l)
		}
		t.Clients, t.ClientsEstimated = sum/float64(d), true
	}
	if t.Cores <= 0 {
		t.Cores = float64(res.Info.Procs)
	}
	if t.CPUPerRequest <= 0 {
		t.CPUPerRequest = time.Duration(g.Running.Wait / int64(max(g.Count, 1)))
	}
	if t.CPUPerRequest > 0 && t.Cores > 0 {
		t.CPUCap = t.Cores / t.CPUPerRequest.Seconds()
	}
	if t.Pool > 0 {
		t.PoolHold = g.poolHold(res, nil)
		if t.PoolHold > 0 {
			t.PoolCap = float64(t.Pool) / t.PoolHold.Seconds()
		}
	}
	t.Predicted, t.Limit = t.capped(time.Duration(g.Latency.Mean), t.PoolHold)
	return t
}

// capped returns the closed-model throughput at mean latency mean with a
// pool held hold per request, and what limits it.
func (t Throughput) capped(mean, hold time.Duration) (float64, string) {
	if mean <= 0 || t.Clients <= 0 {
		return 0, "no requests"
	}
	rps, limit := t.Clients/mean.Seconds(), fmt.Sprintf("clients (%.3g / mean)", t.Clients)
	if t.CPUCap > 0 && t.CPUCap < rps {
		rps, limit = t.CPUCap, fmt.Sprintf("CPU (%.3g cores / %.3g ms per request)", t.Cores, units.Ms(t.CPUPerRequest))
	}
	if t.Pool > 0 && hold > 0 {
		if c := float64(t.Pool) / hold.Seconds(); c < rps {
			rps, limit = c, fmt.Sprintf("pool (%d / %.3g ms held)", t.Pool, units.Ms(hold))
		}
	}
	return rps, limit
}

// PoolMechanisms are the mechanisms that wait for a pooled connection;
// " (pool wait)" is the suffix a JVM recording's pool waits carry
// (package jfr: a semaphore, a blocking queue, HikariCP).
var PoolMechanisms = []string{"database/sql.(*DB).conn", "pgxpool.(*Pool).Acquire", "puddle", " (pool wait)"}

// IsPoolWait reports whether t waits for a pooled connection.
func IsPoolWait(t Term) bool {
	for _, m := range PoolMechanisms {
		if strings.Contains(t.Mechanism, m) {
			return true
		}
	}
	return false
}

// poolHold is the per-request time a pooled connection is held: the
// critical time of the other terms under the frame that waits for the
// pool. adjust, when set, gives a factor per term for a prediction.
func (g *Group) poolHold(res *Result, adjust func(Term) float64) time.Duration {
	frames := map[string]bool{}
	for _, ts := range g.Terms {
		if t := res.Terms[ts.Term]; IsPoolWait(t) {
			frames[t.Frame] = true
		}
	}
	var hold float64
	for _, ts := range g.Terms {
		t := res.Terms[ts.Term]
		if frames[t.Frame] && !IsPoolWait(t) {
			f := 1.0
			if adjust != nil {
				f = adjust(t)
			}
			hold += f * float64(ts.Critical)
		}
	}
	return time.Duration(hold / float64(max(g.Count, 1)))
}

// cpuAfter returns t with the CPU per request, and its cap, after p
// removes or scales the CPU of the frames it names (docs/method.md §5):
// their goroutine time running in them, which CPU samples measure as CPU.
func (g *Group) cpuAfter(res *Result, t Throughput, p PredictionResult) Throughput {
	f := p.Factor
	if p.Op == OpRemove {
		f = 0
	}
	var saved float64
	for _, ts := range g.CPUTerms {
		if res.Terms[ts.Term].Matches(p.A) {
			saved += (1 - f) * float64(ts.Wait)
		}
	}
	saved /= float64(max(g.Count, 1))
	if saved == 0 {
		return t
	}
	t.CPUPerRequest -= time.Duration(saved)
	t.CPUCap = 0
	if t.CPUPerRequest > 0 {
		t.CPUCap = t.Cores / t.CPUPerRequest.Seconds()
	}
	return t
}

// Capped is a what-if with the closed model's caps applied.
type Capped struct {
	PredictionResult
	// Mean is the predicted mean: the simulated one, or when the capped
	// throughput cannot serve the clients at it, clients / RPS (the
	// requests queue at the cap).
	Mean time.Duration
	// P99 is the simulated p99; 0 when the requests queue (not predicted).
	P99 time.Duration
	// Simulated is the mean of the re-simulated timelines; Queue is what
	// Mean adds to it for the queue at the cap.
	Simulated, Queue time.Duration
	RPS              float64
	Limit            string
	// Delta is (Mean − the measured mean) / the measured mean.
	Delta float64
}

// Cap applies t's caps to the prediction p of group g.
func (g *Group) Cap(res *Result, t Throughput, p PredictionResult) Capped {
	c := Capped{PredictionResult: p, Mean: time.Duration(p.Mean), P99: time.Duration(p.P99), Simulated: time.Duration(p.Mean)}
	hold := t.PoolHold
	if t.Pool > 0 && p.Op != OpOverlap {
		hold = g.poolHold(res, func(term Term) float64 {
			if !term.Matches(p.A) {
				return 1
			}
			if p.Op == OpRemove {
				return 0
			}
			return p.Factor
		})
	}
	if p.Op != OpOverlap && t.CPUCap > 0 {
		t = g.cpuAfter(res, t, p)
	}
	c.RPS, c.Limit = t.capped(c.Mean, hold)
	if c.RPS > 0 && t.Clients > 0 {
		// In a closed model with N clients and throughput X, Little's law
		// gives a mean of N / X. When a cap holds X below what the
		// simulated mean allows, the clients queue at the cap; the p99 of
		// the simulated timelines then says nothing.
		if q := time.Duration(t.Clients / c.RPS * 1e9); float64(q) > float64(c.Mean)*1.0005 {
			c.Queue, c.Mean, c.P99 = q-c.Mean, q, 0
		}
	}
	if m := g.Latency.Mean; m > 0 {
		c.Delta = (float64(c.Mean) - m) / m
	}
	return c
}
