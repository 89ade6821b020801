package render

import (
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/units"
	"github.com/latscope/latscope/internal/whatif"
)

// throughputJSON formats the closed model's inputs and caps
// (budget.Group.Closed, docs/method.md §5).
func throughputJSON(t budget.Throughput) Throughput {
	return Throughput{Clients: units.Round3(t.Clients), ClientsEstimated: t.ClientsEstimated, Cores: t.Cores,
		CPUPerRequest: Duration(t.CPUPerRequest), CPUCapRPS: units.Round3(t.CPUCap), Pool: t.Pool,
		PoolHold: Duration(t.PoolHold), PoolCapRPS: units.Round3(t.PoolCap), MeasuredRPS: units.Round3(t.Measured),
		PredictedRPS: units.Round3(t.Predicted)}
}

// predictionJSON formats a what-if with the closed model's caps applied
// (budget.Group.Cap).
func predictionJSON(c budget.Capped) Prediction {
	return Prediction{Spec: c.Spec, Mean: Duration(c.Mean), P99: Duration(c.P99), DeltaPct: units.Round3(100 * c.Delta),
		RPS: units.Round3(c.RPS), Limit: c.Limit, SimulatedMean: Duration(c.Simulated), Queue: Duration(c.Queue),
		rps: c.RPS}
}

// FromOutcome is one of the engine's predictions (whatif.Evaluate) as
// analyze reports it, for a command that prints it beside another model
// (latscope predict); measured is the request type's measured mean in ns,
// for the change.
func FromOutcome(o whatif.Outcome, measured float64) Prediction { return outcomeJSON(o, measured) }

// outcomeJSON formats one of the engine's predictions (whatif.Evaluate);
// measured is the group's measured mean in ns, for the change.
func outcomeJSON(o whatif.Outcome, measured float64) Prediction {
	p := Prediction{Spec: o.Spec, Mean: Duration(o.Mean), P99: Duration(o.P99), RPS: units.Round3(o.RPS), Limit: o.Limit,
		SimulatedMean: Duration(o.Simulated), Queue: Duration(o.Queue), Method: string(o.Method), Why: o.Why, rps: o.RPS}
	if measured > 0 && o.Unstable == "" {
		p.DeltaPct = units.Round3(100 * (float64(o.Mean) - measured) / measured)
	}
	if o.Method == whatif.Queueing && o.After != nil && o.After.Bottleneck != "" {
		p.Limit = "bottleneck " + o.After.Bottleneck
	}
	if o.Interval {
		p.MeanLow, p.MeanHigh = durPtr(Duration(o.Low)), durPtr(Duration(o.High))
		p.se, p.df, p.interval = o.SE, o.DF, true
	}
	return p
}
