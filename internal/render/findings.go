package render

import (
	"errors"
	"time"

	"github.com/latscope/latscope/internal/budget"
)

func findingsJSON(res *budget.Result, rep *Report, in Inputs) []Finding {
	out := []Finding{}
	for _, w := range res.Warnings {
		var f *budget.Finding
		if errors.As(w, &f) {
			if f.Kind == budget.FindCPUSaturated && in.CPUSeconds >= 0 {
				continue // the process's own counter decides below
			}
			out = append(out, Finding{Kind: f.Kind.String(), Group: f.Group, Text: f.Text, Refuse: f.Refuse})
		}
	}
	if in.CPUSeconds < 0 || len(rep.Groups) == 0 {
		return out
	}
	for _, f := range budget.CrossCheck(res, budget.Counter{CPU: time.Duration(in.CPUSeconds * 1e9), Cores: in.Cores}) {
		out = append(out, Finding{Kind: f.Kind.String(), Group: f.Group, Text: f.Text, Refuse: f.Refuse})
	}
	p := rep.Groups[0]
	if f := p.cov.Finding(p.Name); f != nil {
		out = append(out, Finding{Kind: f.Kind.String(), Group: f.Group, Text: f.Text, Refuse: f.Refuse})
	}
	return out
}
