package htmlreport

import (
	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
)

// Analysis returns the sections of an analysis, per request type: the
// budget, the latency distribution, the critical paths, the predictions and
// the profile disagreement; then the scheduler's overhead, when the report
// carries that analysis. The findings are separate (FindingsSection).
func Analysis(rep *render.Report, res *budget.Result, opts Options) ([]Section, error) {
	opts = withDefaults(opts)
	opts.jvm = rep.Trace.JVM
	var out []Section
	for i := range rep.Groups {
		g := &rep.Groups[i]
		prefix := ""
		if len(rep.Groups) > 1 {
			prefix = g.Name + ": "
		}
		if g.Requests.Count == 0 {
			out = append(out, Section{Title: prefix + "no requests", Intro: "No request of this type began and ended inside the trace."})
			continue
		}
		secs := []Section{budgetSection(g, opts), latencySection(g, res.Group(g.Name), opts)}
		switch {
		case !opts.jvm:
			secs = append(secs, pathSection(g, opts), predictionSection(g))
		case hasPaths(g): // the Java library's request events
			secs = append(secs, pathSection(g, opts))
		default:
			secs = append(secs, jvmPathSection())
		}
		if opts.jvm && len(g.Predictions) > 0 {
			secs = append(secs, predictionSection(g))
		}
		if s, ok := callPathSection(g, opts); ok {
			secs = append(secs, s)
		}
		if s, ok := regionSection(g, opts); ok {
			secs = append(secs, s)
		}
		for j := range secs {
			secs[j].Title = prefix + secs[j].Title
			secs[j].ID = slug(secs[j].Title)
		}
		out = append(out, secs...)
	}
	if sr, ok := rep.Sched.(*sched.Report); ok {
		if s, ok := schedSection(sr); ok {
			s.ID = slug(s.Title)
			out = append(out, s)
		}
	}
	if cr, ok := rep.Sched.(*sched.JVMReport); ok {
		s := churnSection(cr)
		s.ID = slug(s.Title)
		out = append(out, s)
	}
	return out, nil
}

func withDefaults(o Options) Options {
	d := DefaultOptions
	if o.MinShare < 0 {
		o.MinShare = d.MinShare
	}
	if o.MaxTerms <= 0 {
		o.MaxTerms = d.MaxTerms
	}
	if o.Bins <= 0 {
		o.Bins = d.Bins
	}
	return o
}
