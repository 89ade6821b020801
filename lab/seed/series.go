package seed

import (
	"math"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/stats"
)

// series are a mode run's per-request figures, in the order the requests
// ended: what the checks' intervals are computed from (batch means and the
// delta method, package stats). All in nanoseconds.
type series struct {
	lat      []float64 // latency
	path     []float64 // the critical path, unknown time included
	critWait []float64 // critical-path time in waits (terms)
	critRun  []float64 // critical-path scheduler wait (runnable)
	// pred holds, per prediction spec, each request's predicted latency:
	// the timeline simulation's own, request by request
	// (budget.PredictionResult.Latencies), as latscope compare takes it.
	pred map[string][]float64
}

// collector gathers series by request type from budget.Options.Each.
type collector struct {
	byGroup map[string]*series
}

func newCollector() *collector {
	return &collector{byGroup: map[string]*series{}}
}

// each is budget.Options.Each: it books one finished request.
func (c *collector) each(group string, p *budget.Path) {
	s := c.byGroup[group]
	if s == nil {
		s = &series{}
		c.byGroup[group] = s
	}
	var path, wait, run float64
	for _, seg := range p.Segs {
		d := float64(seg.End - seg.Start)
		path += d
		switch {
		case seg.Unknown:
		case seg.Term == critpath.NoTerm && seg.Kind == frame.Running:
		case seg.Term == critpath.NoTerm:
			run += d
		default:
			wait += d
		}
	}
	s.lat = append(s.lat, float64(p.Latency))
	s.path = append(s.path, path)
	s.critWait = append(s.critWait, wait)
	s.critRun = append(s.critRun, run)
}

// group returns the series of g, with its predictions' per-request
// latencies; nil when the requests seen do not line up with the group's.
func (c *collector) group(g *budget.Group) *series {
	s := c.byGroup[g.Name]
	if s == nil || len(s.lat) != len(g.Latencies) {
		return nil
	}
	for i, l := range g.Latencies {
		if s.lat[i] != float64(l) {
			return nil
		}
	}
	s.pred = map[string][]float64{}
	for _, p := range g.Predictions {
		if len(p.Latencies) != len(s.lat) {
			continue
		}
		out := make([]float64, len(p.Latencies))
		for r, l := range p.Latencies {
			out[r] = float64(l)
		}
		s.pred[p.Spec] = out
	}
	return s
}

// ms converts an estimate in nanoseconds to milliseconds.
func ms(e stats.Estimate) stats.Estimate { return e.Affine(1e-6, 0) }

// none is an estimate without a standard error.
func none(v float64) stats.Estimate { return stats.Estimate{Value: v, SE: math.NaN(), DF: math.NaN()} }

// meanMs is the mean latency (ms) with its batch-means SE.
func (s *series) meanMs() stats.Estimate {
	if s == nil {
		return none(math.NaN())
	}
	return ms(stats.BatchMeans(s.lat).Estimate())
}

// predictedPer returns the per-request predicted latencies of p (ns),
// scaled by the queue at a throughput cap when the prediction has one
// (its mean is then clients / rps, not the simulated mean: the queue
// keeps the simulated mean's relative error); nil without them.
func (s *series) predictedPer(p render.Prediction) []float64 {
	if s == nil || s.pred[p.Spec] == nil {
		return nil
	}
	xs := s.pred[p.Spec]
	if p.Queue > 0 && p.SimulatedMean > 0 {
		k := float64(p.Mean) / float64(p.SimulatedMean)
		scaled := make([]float64, len(xs))
		for i, x := range xs {
			scaled[i] = k * x
		}
		xs = scaled
	}
	return xs
}

// predictedMs is the predicted mean (ms, centred on the report's) with the
// SE of the requests' predicted latencies.
func (s *series) predictedMs(p render.Prediction) stats.Estimate {
	xs := s.predictedPer(p)
	if xs == nil {
		return none(p.Mean.Ms())
	}
	return ms(stats.BatchMeans(xs).Estimate()).WithValue(p.Mean.Ms())
}

// ratioPct is 100·x̄/ȳ over the requests (x per request, y the latency),
// centred on value (the report's figure), with the delta method's SE;
// the SE is scaled by value / the series' own ratio when the series is a
// stand-in for x whose total is known (scaled true).
func (s *series) ratioPct(x []float64, value float64, scaled bool) stats.Estimate {
	if s == nil {
		return none(value)
	}
	r := stats.RatioOfMeans(x, s.lat).Affine(100, 0)
	if scaled {
		if r.Value == 0 {
			return none(value)
		}
		r.SE *= value / r.Value
	}
	return r.WithValue(value)
}

// plus returns x_i + c for every request.
func plus(x []float64, c float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v + c
	}
	return out
}

// sum returns x_i + y_i.
func sum(x, y []float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] + y[i]
	}
	return out
}
