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
	// pred holds, per prediction spec, each request's predicted latency
	// (predicted, below).
	pred map[string][]float64
	// crit is each request's critical time by term, for pred.
	crit [][]termTime
}

type termTime struct {
	term critpath.TermID
	ns   int64
}

// collector gathers series by request type from budget.Options.Each.
type collector struct{ byGroup map[string]*series }

func newCollector() *collector { return &collector{byGroup: map[string]*series{}} }

// each is budget.Options.Each: it books one finished request.
func (c *collector) each(group string, p *budget.Path) {
	s := c.byGroup[group]
	if s == nil {
		s = &series{}
		c.byGroup[group] = s
	}
	var path, wait, run float64
	var tt []termTime
	for _, seg := range p.Segs {
		d := int64(seg.End - seg.Start)
		path += float64(d)
		switch {
		case seg.Unknown:
		case seg.Term == critpath.NoTerm && seg.Kind == frame.Running:
		case seg.Term == critpath.NoTerm:
			run += float64(d)
		default:
			wait += float64(d)
			found := false
			for k := range tt {
				if tt[k].term == seg.Term {
					tt[k].ns += d
					found = true
					break
				}
			}
			if !found {
				tt = append(tt, termTime{seg.Term, d})
			}
		}
	}
	s.lat = append(s.lat, float64(p.Latency))
	s.path = append(s.path, path)
	s.critWait = append(s.critWait, wait)
	s.critRun = append(s.critRun, run)
	s.crit = append(s.crit, tt)
}

// group returns the series of g, with its predictions' per-request
// latencies; nil when the requests seen do not line up with the group's.
func (c *collector) group(g *budget.Group, terms []budget.Term, preds []budget.Prediction) *series {
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
	if len(g.Predictions) == len(preds) {
		for i, p := range preds {
			s.pred[g.Predictions[i].Spec] = s.predicted(p, terms, g.Predictions[i].Mean)
		}
	}
	s.crit = nil
	return s
}

// predicted approximates each request's predicted latency from its
// critical path as latscope compare does (docs/method.md §13): remove
// takes the matched terms' critical time off the latency, overlap=A,B the
// smaller of the two; the gains are then scaled to average to the
// simulation's (mean is the simulated predicted mean), so only their
// spread is the approximation's.
func (s *series) predicted(p budget.Prediction, terms []budget.Term, mean float64) []float64 {
	matches := func(t critpath.TermID, name string) bool {
		return t >= 0 && int(t) < len(terms) && terms[t].Matches(name)
	}
	gains := make([]float64, len(s.lat))
	var sumLat, sumGain float64
	for r := range s.lat {
		var a, b int64
		for _, tt := range s.crit[r] {
			if matches(tt.term, p.A) {
				a += tt.ns
			} else if p.Op == budget.OpOverlap && matches(tt.term, p.B) {
				b += tt.ns
			}
		}
		switch p.Op {
		case budget.OpRemove:
			gains[r] = float64(a)
		case budget.OpScale:
			gains[r] = (1 - p.Factor) * float64(a)
		default:
			gains[r] = float64(min(a, b))
		}
		sumLat += s.lat[r]
		sumGain += gains[r]
	}
	n := float64(len(s.lat))
	want := sumLat/n - mean
	scale, shift := 1.0, 0.0
	switch got := sumGain / n; {
	case math.Abs(got-want) <= 1e-9*math.Abs(want)+0.5:
	case got != 0:
		scale = want / got
	default:
		shift = want
	}
	out := make([]float64, len(s.lat))
	for r := range s.lat {
		out[r] = s.lat[r] - (scale*gains[r] + shift)
	}
	return out
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
