package main

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/whatif"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// What-ifs and pools speak one grammar in every command (analyze, compare,
// predict):
//
//	--what-if SPEC (repeatable; analyze and compare also take it as --predict)
//	  remove=TERM  scale=TERM:FACTOR  overlap=TERM,TERM   change the request's timeline
//	  pool=SIZE  pool=NAME:SIZE  cores=N  clients=N  rate=R   change the queueing model's inputs
//	--pool SIZE | NAME:SIZE
//
// A command that cannot evaluate a kind refuses it with an error naming
// the flag and the command that can; it never ignores it. The grammar is
// package whatif's (whatif.ParseSpec).

// whatIfs is the repeatable --what-if flag, parsed as it is set: the specs
// as given, and the timeline ones (remove, scale, overlap) as predictions.
type whatIfs struct {
	specs []whatIf
}

// whatIf is one spec and the flag name it was given by.
type whatIf struct {
	spec, flag string
	pred       *budget.Prediction // a timeline what-if; nil for a model one
}

// flag returns the flag.Value that appends to w under the flag name (its
// own, or an alias).
func (w *whatIfs) flag(name string) flag.Value { return &whatIfFlag{w, name} }

type whatIfFlag struct {
	w    *whatIfs
	name string
}

func (f *whatIfFlag) String() string {
	if f == nil || f.w == nil {
		return ""
	}
	var ss []string
	for _, x := range f.w.specs {
		ss = append(ss, x.spec)
	}
	return strings.Join(ss, " ")
}

func (f *whatIfFlag) Set(v string) error {
	s, err := whatif.ParseSpec(v)
	if err != nil {
		return err
	}
	f.w.specs = append(f.w.specs, whatIf{spec: v, flag: "--" + f.name, pred: s.Timeline})
	return nil
}

// predictions returns the timeline what-ifs, in order.
func (w *whatIfs) predictions() []budget.Prediction {
	var out []budget.Prediction
	for _, x := range w.specs {
		if x.pred != nil {
			out = append(out, *x.pred)
		}
	}
	return out
}

// engine returns every spec, parsed, in order, for the prediction engine
// (whatif.Evaluate).
func (w *whatIfs) engine() []whatif.Spec {
	var out []whatif.Spec
	for _, x := range w.specs {
		out = append(out, whatif.Spec{Text: x.spec, Timeline: x.pred})
	}
	return out
}

// all returns every spec as given, in order.
func (w *whatIfs) all() []string {
	var out []string
	for _, x := range w.specs {
		out = append(out, x.spec)
	}
	return out
}

// poolFlag is a repeatable --pool flag: SIZE alone (a database/sql, pgxpool
// or puddle pool, recognised by its acquire wait) or NAME:SIZE (NAME the
// frame that acquires it), the grammar of the what-if pool=. min is the
// smallest SIZE: 0 where it means no pool (analyze's default).
type poolFlag struct {
	pools *[]queueing.PoolSpec
	min   int
}

func (p *poolFlag) String() string {
	if p == nil || p.pools == nil {
		return ""
	}
	var ss []string
	for _, x := range *p.pools {
		if x.Name == "" {
			ss = append(ss, strconv.Itoa(x.Size))
		} else {
			ss = append(ss, fmt.Sprintf("%s:%d", x.Name, x.Size))
		}
	}
	return strings.Join(ss, ",")
}

func (p *poolFlag) Set(v string) error {
	x, err := queueing.ParsePool(v)
	if err != nil && p.min == 0 && (v == "0" || strings.HasSuffix(v, ":0")) {
		name, _, _ := strings.Cut(v, ":")
		if name == v {
			name = ""
		}
		x, err = queueing.PoolSpec{Name: name, Size: 0}, nil
	}
	if err != nil {
		extra := ""
		if p.min == 0 {
			extra = " (0: no pool)"
		}
		return fmt.Errorf("want a whole number from %d%s to %d, or NAME:SIZE with NAME the frame that acquires the pool", p.min, extra, maxPool)
	}
	*p.pools = append(*p.pools, x)
	return nil
}

// regexpFlag is an optional regular expression.
type regexpFlag struct{ re *regexp.Regexp }

func (r *regexpFlag) String() string {
	if r.re == nil {
		return ""
	}
	return r.re.String()
}

func (r *regexpFlag) Set(v string) error {
	re, err := regexp.Compile(v)
	if err != nil {
		return fmt.Errorf("bad regular expression: %w", err)
	}
	r.re = re
	return nil
}

// inferFlag selects where requests come from.
type inferFlag struct{ mode budget.InferMode }

func (f *inferFlag) String() string {
	return [...]string{"auto", "tasks", "http"}[f.mode]
}

func (f *inferFlag) Set(v string) error {
	switch v {
	case "auto":
		f.mode = budget.InferAuto
	case "tasks":
		f.mode = budget.InferTasks
	case "http":
		f.mode = budget.InferHTTP
	default:
		return fmt.Errorf("want auto, tasks or http")
	}
	return nil
}
