package render

import (
	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/internal/units"
)

// throughputJSON formats the closed model's inputs and caps
// (budget.Group.Closed, docs/method.md §5).
func throughputJSON(t budget.Throughput) ThroughputJSON {
	return ThroughputJSON{Clients: units.Round3(t.Clients), ClientsEstimated: t.ClientsEstimated, Cores: t.Cores,
		CPUPerRequestMs: units.MsOf(float64(t.CPUPerRequest)), CPUCapRPS: units.Round3(t.CPUCap), Pool: t.Pool,
		PoolHoldMs: units.MsOf(float64(t.PoolHold)), PoolCapRPS: units.Round3(t.PoolCap), MeasuredRPS: units.Round3(t.Measured),
		PredictedRPS: units.Round3(t.Predicted)}
}

// predictionJSON formats a what-if with the closed model's caps applied
// (budget.Group.Cap).
func predictionJSON(c budget.Capped) PredictionJSON {
	return PredictionJSON{Spec: c.Spec, MeanMs: units.MsOf(float64(c.Mean)), P99Ms: units.MsOf(float64(c.P99)), DeltaPct: units.Round3(100 * c.Delta),
		RPS: units.Round3(c.RPS), Limit: c.Limit, SimulatedMeanMs: units.MsOf(float64(c.Simulated)), QueueMs: units.MsOf(float64(c.Queue)),
		mean: c.Mean, p99: c.P99, rps: c.RPS}
}
