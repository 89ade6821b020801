package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/latscope/latscope/budget"
)

// poolMechanisms are mechanisms that wait for a pooled connection.
var poolMechanisms = []string{"database/sql.(*DB).conn", "pgxpool.(*Pool).Acquire", "puddle"}

func isPoolWait(t budget.Term) bool {
	for _, m := range poolMechanisms {
		if strings.Contains(t.Mechanism, m) {
			return true
		}
	}
	return false
}

// throughput fills in the closed-model inputs (docs/method.md §5): rps = clients /
// mean latency, capped by cores / CPU per request and pool size / hold time.
func throughput(res *budget.Result, g *budget.Group, in Inputs, gj GroupJSON) ThroughputJSON {
	t := ThroughputJSON{Clients: in.Clients, Cores: in.Cores, Pool: in.Pool, MeasuredRPS: gj.Requests.RPS}
	if d := res.Info.Duration(); t.Clients <= 0 && d > 0 {
		var sum float64
		for _, l := range g.Latencies {
			sum += float64(l)
		}
		t.Clients, t.ClientsEstimated = round(sum/float64(d)), true
	}
	if t.Cores <= 0 {
		t.Cores = float64(res.Info.Procs)
	}
	t.CPUPerRequestMs = gj.CPU.RunningMs
	if gj.CPU.IndependentMs != nil {
		t.CPUPerRequestMs = *gj.CPU.IndependentMs
	}
	if t.CPUPerRequestMs > 0 && t.Cores > 0 {
		t.CPUCapRPS = round(t.Cores * 1000 / t.CPUPerRequestMs)
	}
	if t.Pool > 0 {
		t.PoolHoldMs = poolHold(res, g, nil)
		if t.PoolHoldMs > 0 {
			t.PoolCapRPS = round(float64(t.Pool) * 1000 / t.PoolHoldMs)
		}
	}
	t.PredictedRPS, _ = capRPS(t, gj.Requests.MeanMs, t.PoolHoldMs)
	return t
}

// poolHold is the per-request time a pooled connection is held: the
// critical time of the other terms under the frame that waits for the pool.
// adjust, when set, gives a factor per term for a prediction.
func poolHold(res *budget.Result, g *budget.Group, adjust func(budget.Term) float64) float64 {
	frames := map[string]bool{}
	for _, ts := range g.Terms {
		if t := res.Terms[ts.Term]; isPoolWait(t) {
			frames[t.Frame] = true
		}
	}
	var hold float64
	for _, ts := range g.Terms {
		t := res.Terms[ts.Term]
		if frames[t.Frame] && !isPoolWait(t) {
			f := 1.0
			if adjust != nil {
				f = adjust(t)
			}
			hold += f * float64(ts.Critical)
		}
	}
	return ms(hold / float64(max(g.Count, 1)))
}

// capRPS returns the predicted closed-model throughput and what limits it.
func capRPS(t ThroughputJSON, meanMs, holdMs float64) (float64, string) {
	if meanMs <= 0 || t.Clients <= 0 {
		return 0, "no requests"
	}
	rps, limit := t.Clients*1000/meanMs, fmt.Sprintf("clients (%.3g / mean)", t.Clients)
	if t.CPUCapRPS > 0 && t.CPUCapRPS < rps {
		rps, limit = t.CPUCapRPS, fmt.Sprintf("CPU (%.3g cores / %.3g ms per request)", t.Cores, t.CPUPerRequestMs)
	}
	if t.Pool > 0 && holdMs > 0 {
		if c := float64(t.Pool) * 1000 / holdMs; c < rps {
			rps, limit = c, fmt.Sprintf("pool (%d / %.3g ms held)", t.Pool, holdMs)
		}
	}
	return round(rps), limit
}

func predictionsJSON(res *budget.Result, g *budget.Group, in Inputs, gj GroupJSON) []PredictionJSON {
	out := []PredictionJSON{}
	for _, p := range g.Predictions {
		pj := PredictionJSON{Spec: p.Spec, MeanMs: ms(p.Mean), P99Ms: ms(float64(p.P99))}
		if m := gj.Requests.MeanMs; m > 0 {
			pj.DeltaPct = round(100 * (pj.MeanMs - m) / m)
		}
		hold := gj.Throughput.PoolHoldMs
		if in.Pool > 0 && p.Op != budget.OpOverlap {
			hold = poolHold(res, g, func(t budget.Term) float64 {
				if !t.Matches(p.A) {
					return 1
				}
				if p.Op == budget.OpRemove {
					return 0
				}
				return p.Factor
			})
		}
		pj.RPS, pj.Limit = capRPS(gj.Throughput, pj.MeanMs, hold)
		if math.IsNaN(pj.RPS) {
			pj.RPS = 0
		}
		queueAtCap(&pj, gj.Throughput.Clients, gj.Requests.MeanMs)
		out = append(out, pj)
	}
	return out
}

// queueAtCap keeps a prediction consistent with its throughput: in a
// closed model with N clients and throughput X, Little's law gives a mean
// of N / X. When a cap holds X below what the simulated mean allows, the
// clients queue at the cap and the mean is N / X; the p99 of the simulated
// timelines then says nothing and is dropped. measuredMs is the trace's
// mean, for DeltaPct.
func queueAtCap(pj *PredictionJSON, clients, measuredMs float64) {
	pj.SimulatedMeanMs = pj.MeanMs
	if pj.RPS <= 0 || clients <= 0 {
		return
	}
	q := clients * 1000 / pj.RPS
	if q <= pj.MeanMs*1.0005 { // the clients' own rate (rounding aside)
		return
	}
	pj.QueueMs, pj.MeanMs, pj.P99Ms = round(q-pj.MeanMs), round(q), 0
	if measuredMs > 0 {
		pj.DeltaPct = round(100 * (pj.MeanMs - measuredMs) / measuredMs)
	}
}
