package render

import "github.com/latscope/latscope/budget"

// throughputJSON formats the closed model's inputs and caps
// (budget.Group.Closed, docs/method.md §5).
func throughputJSON(t budget.Throughput) ThroughputJSON {
	return ThroughputJSON{Clients: round(t.Clients), ClientsEstimated: t.ClientsEstimated, Cores: t.Cores,
		CPUPerRequestMs: ms(float64(t.CPUPerRequest)), CPUCapRPS: round(t.CPUCap), Pool: t.Pool,
		PoolHoldMs: ms(float64(t.PoolHold)), PoolCapRPS: round(t.PoolCap), MeasuredRPS: round(t.Measured),
		PredictedRPS: round(t.Predicted)}
}

// predictionJSON formats a what-if with the closed model's caps applied
// (budget.Group.Cap).
func predictionJSON(c budget.Capped) PredictionJSON {
	return PredictionJSON{Spec: c.Spec, MeanMs: ms(float64(c.Mean)), P99Ms: ms(float64(c.P99)), DeltaPct: round(100 * c.Delta),
		RPS: round(c.RPS), Limit: c.Limit, SimulatedMeanMs: ms(float64(c.Simulated)), QueueMs: ms(float64(c.Queue)),
		mean: c.Mean, p99: c.P99, rps: c.RPS}
}
