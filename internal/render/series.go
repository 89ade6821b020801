package render

import (
	"math"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
)

// CriticalTerms keeps, per request type and per request in the order the
// requests ended, its latency and its critical-path time by term: what a
// prediction's per-request latencies, and so the spread of its predicted
// mean, are approximated from (docs/method.md §13). latscope compare and
// the seed lab both fill one from budget.Options.Each.
type CriticalTerms struct {
	byGroup map[string]*groupPaths
}

type groupPaths struct {
	lat  []int64
	crit [][]termTime // per request: critical time by term
}

type termTime struct {
	term critpath.TermID
	ns   int64
}

// NewCriticalTerms returns an empty CriticalTerms.
func NewCriticalTerms() *CriticalTerms {
	return &CriticalTerms{byGroup: map[string]*groupPaths{}}
}

// Add is budget.Options.Each: it books one finished request of group.
func (c *CriticalTerms) Add(group string, p *budget.Path) {
	g := c.byGroup[group]
	if g == nil {
		g = &groupPaths{}
		c.byGroup[group] = g
	}
	var tt []termTime
	for _, s := range p.Segs {
		term := s.Subject() // a wait's term, or the frame a running piece ran in: what a what-if acts on
		if term == critpath.NoTerm {
			continue
		}
		d := int64(s.End - s.Start)
		found := false
		for k := range tt {
			if tt[k].term == term {
				tt[k].ns += d
				found = true
				break
			}
		}
		if !found {
			tt = append(tt, termTime{term, d})
		}
	}
	g.lat = append(g.lat, p.Latency)
	g.crit = append(g.crit, tt)
}

// Gains returns, for each of preds in order, each request's gain (ns: its
// latency minus its predicted latency) as its critical path gives it:
// remove takes the matched terms' critical time off the latency,
// scale=T:F scales it, overlap=A,B takes off the smaller of the two. For a
// request on one goroutine this is the simulation's own answer; where the
// change lets another branch become critical (a fork) it overstates the
// gain, so the gains are then scaled to average to the simulation's (the
// group's predicted mean, g.Predictions). Only the series' spread is the
// approximation's: the predicted mean is the simulation's. nil when the
// requests booked do not line up with the group's, or the group's
// predictions are not preds.
func (c *CriticalTerms) Gains(g *budget.Group, terms []budget.Term, preds []budget.Prediction) [][]float64 {
	gp := c.byGroup[g.Name]
	if gp == nil || len(gp.lat) != len(g.Latencies) || len(g.Predictions) != len(preds) {
		return nil
	}
	for i, l := range g.Latencies {
		if gp.lat[i] != l {
			return nil
		}
	}
	out := make([][]float64, len(preds))
	for i, p := range preds {
		gains := c.RawGains(g.Name, p, terms)
		var sumLat, sumGain float64
		for r, lat := range gp.lat {
			sumLat += float64(lat)
			sumGain += gains[r]
		}
		n := float64(len(gp.lat))
		want := sumLat/n - g.Predictions[i].Mean // the simulation's mean gain
		scale, shift := 1.0, 0.0
		switch got := sumGain / n; {
		case math.Abs(got-want) <= 1e-9*math.Abs(want)+0.5: // agrees to the nanosecond
		case got != 0:
			scale = want / got
		default:
			shift = want
		}
		for r := range gains {
			gains[r] = scale*gains[r] + shift
		}
		out[i] = gains
	}
	return out
}

// Predicted returns, for each of preds in order, each request's predicted
// latency (ns): its latency less its gain (Gains), as Samples.Predicted
// holds them. nil when Gains is.
func (c *CriticalTerms) Predicted(g *budget.Group, terms []budget.Term, preds []budget.Prediction) [][]int64 {
	gains := c.Gains(g, terms, preds)
	if gains == nil {
		return nil
	}
	lat := c.byGroup[g.Name].lat
	out := make([][]int64, len(gains))
	for i, gs := range gains {
		out[i] = make([]int64, len(lat))
		for r, l := range lat {
			out[i][r] = l - int64(math.Round(gs[r]))
		}
	}
	return out
}

// RawGains returns each booked request of group's gain under p as its
// critical path gives it, before Gains calibrates them to the simulation;
// nil for a group with no requests booked.
func (c *CriticalTerms) RawGains(group string, p budget.Prediction, terms []budget.Term) []float64 {
	gp := c.byGroup[group]
	if gp == nil {
		return nil
	}
	matches := func(t critpath.TermID, name string) bool {
		return t >= 0 && int(t) < len(terms) && terms[t].Matches(name)
	}
	out := make([]float64, len(gp.lat))
	for r := range gp.lat {
		var a, b int64
		for _, tt := range gp.crit[r] {
			if matches(tt.term, p.A) {
				a += tt.ns
			} else if p.Op == budget.OpOverlap && matches(tt.term, p.B) {
				b += tt.ns
			}
		}
		switch p.Op {
		case budget.OpRemove:
			out[r] = float64(a)
		case budget.OpScale:
			out[r] = (1 - p.Factor) * float64(a)
		default:
			out[r] = float64(min(a, b))
		}
	}
	return out
}
