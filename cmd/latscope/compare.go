package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/latscope/latscope/internal/analysis"
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/render"
)

func init() {
	register("compare", "check predictions from one trace against a second trace where the fix was made", runCompare)
}

const compareExamples = `
examples:
  latscope compare --predict overlap=callUpstream,queryDB serial.trace overlapped.trace
  latscope compare --json --miss 3 --predict remove=lockedSection before.trace after.trace
`

func runCompare(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var (
		preds   predictions
		app     stringList
		task    string
		miss    float64
		asJSON  bool
		clients float64
	)
	fs := newFlagSet("compare", "compare [flags] BEFORE AFTER", stderr)
	fs.Var(&preds, "predict", "what-if `SPEC` evaluated on BEFORE (repeatable): remove=TERM, scale=TERM:FACTOR, overlap=TERM,TERM")
	fs.Var(&app, "app", "package-path `PREFIX` of your code (repeatable)")
	fs.StringVar(&task, "task", "", "compare requests of task type `NAME` (default: the most frequent)")
	positiveFloatVar(fs.FlagSet, &miss, "miss", render.DefaultMissPct, maxMissPct, "report a miss when a prediction's mean is off by more than this `PERCENT`")
	floatVar(fs.FlagSet, &clients, "clients", 0, 0, maxClients, "closed-model clients `N` for throughput predictions (default: estimated from BEFORE)")
	fs.BoolVar(&asJSON, "json", false, "print JSON (schema: docs/json.md)")
	usageWith(fs, stderr, "compare [flags] BEFORE AFTER", compareExamples)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("want two trace files (before and after), got %d arguments", fs.NArg())
	}
	for _, name := range fs.Args() {
		if err := checkInput(name, "trace file"); err != nil {
			return err
		}
	}
	reports := make([]*render.Report, 2)
	samples := &render.Samples{After: map[string][]int64{}, Predicted: map[string][][]int64{}}
	for i, name := range fs.Args() {
		opts := budget.DefaultOptions
		opts.Rules.App = app
		var paths *criticalTerms
		if i == 0 {
			opts.Predictions = preds
			paths = &criticalTerms{byGroup: map[string]*groupPaths{}}
			opts.Each = paths.add
		}
		res, err := compareResult(ctx, name, opts) // a Go trace or a JVM recording
		if _, ok := errors.AsType[*analysis.DamagedError](err); ok {
			return fmt.Errorf("%w (compare needs two whole traces: record this one again; analyze --partial reads what came before the damage)", err)
		}
		if err != nil {
			return err
		}
		in := render.Inputs{File: name, CPUSeconds: -1, Task: task}
		if i == 0 {
			in.Clients = clients
		}
		r, err := pipeline.FromResult(res, in)
		if err != nil {
			return err
		}
		if i == 0 {
			if err := r.Unmatched(); err != nil {
				return err
			}
			for _, g := range res.Groups {
				samples.Predicted[g.Name] = paths.predicted(g, res.Terms, preds)
			}
		} else {
			for _, g := range res.Groups {
				samples.After[g.Name] = g.Latencies
			}
		}
		reports[i] = r.Report
	}
	c, err := render.CompareSamples(reports[0], reports[1], miss, samples)
	if err != nil {
		return err
	}
	if asJSON {
		return c.WriteJSON(stdout)
	}
	return c.WriteText(stdout)
}

// criticalTerms keeps, per request of the first trace in the order the
// requests ended, its latency and its critical-path time by term: what
// the predicted latencies' spread is approximated from (docs/method.md §13).
type criticalTerms struct {
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

// add is budget.Options.Each.
func (c *criticalTerms) add(group string, p *budget.Path) {
	g := c.byGroup[group]
	if g == nil {
		g = &groupPaths{}
		c.byGroup[group] = g
	}
	var tt []termTime
	for _, s := range p.Segs {
		term := s.Subject() // a wait's term, or the frame a running piece ran in
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

// predicted approximates each request's predicted latency for each
// prediction from its critical path: remove takes the matched terms'
// critical time off the latency, scale=T:F scales it, overlap=A,B takes
// off the smaller of the two. For a request on one goroutine this is the
// simulation's own answer; where the change lets another branch become
// critical (a fork) it overstates the gain, so the gains are then scaled
// to average to the simulation's (the group's predicted mean). Only the
// series' spread is used: the predicted mean is the simulation's. nil
// when the requests seen do not line up with the group's.
func (c *criticalTerms) predicted(g *budget.Group, terms []budget.Term, preds []budget.Prediction) [][]int64 {
	gp := c.byGroup[g.Name]
	if gp == nil || len(gp.lat) != len(g.Latencies) || len(g.Predictions) != len(preds) {
		return nil
	}
	for i, l := range g.Latencies {
		if gp.lat[i] != l {
			return nil
		}
	}
	out := make([][]int64, len(preds))
	for i, p := range preds {
		gains := gp.gains(p, terms)
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
		out[i] = make([]int64, len(gp.lat))
		for r, lat := range gp.lat {
			out[i][r] = lat - int64(math.Round(scale*gains[r]+shift))
		}
	}
	return out
}

// gains returns each request's gain under p as its critical path gives it
// (before the calibration of predicted).
func (gp *groupPaths) gains(p budget.Prediction, terms []budget.Term) []float64 {
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
