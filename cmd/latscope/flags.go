package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/latscope/latscope/internal/budget"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// predictions is a repeatable --predict flag, parsed as it is set.
type predictions []budget.Prediction

func (p *predictions) String() string {
	var ss []string
	for _, x := range *p {
		ss = append(ss, x.Spec)
	}
	return strings.Join(ss, " ")
}

func (p *predictions) Set(v string) error {
	x, err := budget.ParsePrediction(v)
	if err != nil {
		return err
	}
	*p = append(*p, x)
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
