// Package whatif is latscope's one prediction engine (issue #36 §3): it
// parses the what-if grammar every command speaks and evaluates each spec
// by the queueing model (package queueing) where a queue — a connection
// pool, a lock given as a pool of one, the CPUs — is in play, and by the
// timeline simulation (package budget, critpath) where none is. Each
// prediction carries the method that made it, the reason for the choice,
// and a 95 % interval for its mean.
//
// Like the analyses it sits on, it is pure: it reads a budget.Result and
// does no I/O.
package whatif

import (
	"fmt"
	"slices"
	"strings"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/queueing"
)

// Spec is one what-if as written, parsed.
//
//	remove=TERM  scale=TERM:FACTOR  overlap=TERM,TERM   change the request's timeline
//	pool=SIZE  pool=NAME:SIZE  cores=N  clients=N  rate=R  workers=N   change the queueing model's inputs
type Spec struct {
	Text string // as written
	// Timeline is the parsed remove=, scale= or overlap=; nil for a model
	// spec (pool=, cores=, clients=, rate=, workers=), whose value the model checks
	// where it applies it.
	Timeline *budget.Prediction
}

// ModelOps are the operations that change the queueing model's inputs
// rather than the request's timeline.
var ModelOps = []string{"pool", "cores", "clients", "rate", "workers"}

// Model reports whether s changes the queueing model's inputs (pool=,
// cores=, clients=, rate=, workers=): only the queueing model evaluates it.
func (s Spec) Model() bool { return s.Timeline == nil }

// Op returns the spec's operation, the text before "=".
func (s Spec) Op() string {
	op, _, _ := strings.Cut(s.Text, "=")
	return op
}

// ParseSpec checks a what-if's grammar. Timeline what-ifs are parsed whole
// (budget.ParsePrediction); a pool is checked for its size, the other model
// what-ifs for a value, which the queueing model checks where it applies
// them. Every error is one line naming the spec.
func ParseSpec(s string) (Spec, error) {
	op, arg, _ := strings.Cut(s, "=")
	switch {
	case op == "remove" || op == "scale" || op == "overlap":
		p, err := budget.ParsePrediction(s)
		if err != nil {
			return Spec{}, err
		}
		return Spec{Text: s, Timeline: &p}, nil
	case op == "pool":
		if _, err := queueing.ParsePool(arg); err != nil {
			return Spec{}, fmt.Errorf("what-if %q: %w", s, err)
		}
		return Spec{Text: s}, nil
	case slices.Contains(ModelOps, op):
		if arg == "" {
			return Spec{}, fmt.Errorf("what-if %q: want %s=N", s, op)
		}
		return Spec{Text: s}, nil
	}
	return Spec{}, fmt.Errorf("what-if %q: unknown operation %q (remove=, scale=, overlap=, pool=, cores=, clients=, rate=, workers=)", s, op)
}

// Predictions returns the timeline specs' predictions, in order: what
// budget.Options.Predictions must hold for Evaluate.
func Predictions(specs []Spec) []budget.Prediction {
	var out []budget.Prediction
	for _, s := range specs {
		if s.Timeline != nil {
			out = append(out, *s.Timeline)
		}
	}
	return out
}
