package budget

import (
	"fmt"
	"github.com/latscope/latscope/internal/critpath"
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/internal/frame"
)

// Op is a what-if operation.
type Op uint8

// Operations (docs/method.md §5).
const (
	OpRemove  Op = iota // the term costs nothing
	OpScale             // the term's waits are multiplied by Factor
	OpOverlap           // terms A and B run concurrently
)

var opNames = [...]string{OpRemove: "remove", OpScale: "scale", OpOverlap: "overlap"}

// String returns the operation's name as written in a spec.
func (o Op) String() string { return opNames[o] }

// Prediction is one parsed timeline what-if (--what-if remove=, scale=,
// overlap=).
type Prediction struct {
	Spec   string // as written
	Op     Op
	A, B   string // term names (application frames, matched by suffix)
	Factor float64
}

// MaxScaleFactor is the largest FACTOR a scale prediction accepts: beyond
// it the prediction is no longer a what-if about this service, and scaled
// waits overflow.
const MaxScaleFactor = 1000

// ParsePrediction parses "remove=NAME", "scale=NAME:F" or "overlap=A,B".
// F is a finite number from 0 to MaxScaleFactor.
// NAME matches application frames that equal it or end in "."+NAME or
// "/"+NAME, so "callUpstream" matches "main.callUpstream".
func ParsePrediction(spec string) (Prediction, error) {
	op, arg, ok := strings.Cut(spec, "=")
	if !ok || arg == "" {
		return Prediction{}, fmt.Errorf("prediction %q: want remove=TERM, scale=TERM:FACTOR or overlap=TERM,TERM", spec)
	}
	p := Prediction{Spec: spec}
	switch op {
	case "remove":
		p.Op, p.A = OpRemove, arg
	case "scale":
		name, f, ok := strings.Cut(arg, ":")
		v, err := strconv.ParseFloat(f, 64)
		if !ok || name == "" || err != nil || math.IsNaN(v) || v < 0 || v > MaxScaleFactor {
			return Prediction{}, fmt.Errorf("prediction %q: want scale=TERM:FACTOR with FACTOR a number from 0 to %d, e.g. scale=queryDB:0.5", spec, MaxScaleFactor)
		}
		p.Op, p.A, p.Factor = OpScale, name, v
	case "overlap":
		a, b, ok := strings.Cut(arg, ",")
		if !ok || a == "" || b == "" || strings.Contains(b, ",") {
			return Prediction{}, fmt.Errorf("prediction %q: want overlap=TERM,TERM (two terms)", spec)
		}
		if a == b {
			return Prediction{}, fmt.Errorf("prediction %q: a term cannot overlap itself; want two different terms, overlap=A,B", spec)
		}
		p.Op, p.A, p.B = OpOverlap, a, b
	default:
		return Prediction{}, fmt.Errorf("prediction %q: unknown operation %q (remove, scale, overlap)", spec, op)
	}
	return p, nil
}

// MatchName reports whether an application frame matches a term name:
// the name is the frame, or a suffix of it after a "." or "/", of the
// frame as the trace names it or as it is printed (frame.Short: a module's
// major-version element replaced by the package's name, so
// "raft.(*node).run" matches "go.etcd.io/raft/v3.(*node).run").
func MatchName(fn, name string) bool {
	if matchSuffix(fn, name) {
		return true
	}
	s := frame.Short(fn)
	return s != fn && !strings.HasSuffix(fn, s) && matchSuffix(s, name)
}

func matchSuffix(fn, name string) bool {
	if fn == name {
		return true
	}
	if !strings.HasSuffix(fn, name) || len(fn) == len(name) {
		return false
	}
	c := fn[len(fn)-len(name)-1]
	return c == '.' || c == '/'
}

// Model is the timeline simulation's model of p over a term table (by
// TermID): the one both runtimes' analyses simulate each request with.
func (p Prediction) Model(terms []Term) critpath.Model {
	ma := matcher(terms, p.A)
	switch p.Op {
	case OpRemove:
		return critpath.Model{Scale: func(t critpath.TermID) float64 { return b2f(!ma(t)) }}
	case OpScale:
		f := p.Factor
		return critpath.Model{Scale: func(t critpath.TermID) float64 {
			if ma(t) {
				return f
			}
			return 1
		}}
	default:
		return critpath.Model{Overlap: []critpath.Pair{{A: ma, B: matcher(terms, p.B)}}}
	}
}

// MatchesAny reports whether p names a term of terms (both of an
// overlap's terms).
func (p Prediction) MatchesAny(terms []Term) bool {
	has := func(name string) bool {
		for _, t := range terms {
			if t.Matches(name) {
				return true
			}
		}
		return false
	}
	return has(p.A) && (p.Op != OpOverlap || has(p.B))
}

// matcher returns a predicate over the TermIDs of terms for a term name.
func matcher(terms []Term, name string) func(critpath.TermID) bool {
	return func(t critpath.TermID) bool {
		return t >= 0 && int(t) < len(terms) && terms[t].Matches(name)
	}
}
