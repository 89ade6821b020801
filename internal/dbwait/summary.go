package dbwait

import (
	"slices"
	"time"

	iquantile "github.com/latscope/latscope/internal/quantile"
)

// summarize counts the result and takes medians.
func (a *Analyzer) summarize(r *Result) Summary {
	s := Summary{Spans: len(a.spans), Matched: len(r.Queries), Statements: a.statements, Uncommented: a.uncommented,
		EndLogged: a.endLogged, EndWithoutSpan: a.endAlone}
	for _, n := range a.noTP {
		s.NoTraceParent += n
	}
	var app, db, out, over []time.Duration
	var by [NumVerdicts][3][]time.Duration
	for _, q := range r.Queries {
		app, db, out = append(app, q.App), append(db, q.DB), append(out, q.Outside)
		if q.Outside > r.Options.Threshold {
			s.Over++
			over = append(over, q.Outside)
		}
		if q.Verdict == Network && q.Alternative == DBCPU {
			s.NetworkOrDBCPU++
		}
		v := &s.ByVerdict[q.Verdict]
		v.Count++
		v.OutsideSum += q.Outside
		b := &by[q.Verdict]
		b[0], b[1], b[2] = append(b[0], q.App), append(b[1], q.DB), append(b[2], q.Outside)
	}
	s.AppP50, s.DBP50, s.OutsideP50, s.OverP50 = quantile(app, 0.5), quantile(db, 0.5), quantile(out, 0.5), quantile(over, 0.5)
	for v := range s.ByVerdict {
		b := &by[v]
		s.ByVerdict[v].AppP50, s.ByVerdict[v].DBP50, s.ByVerdict[v].OutsideP50 = quantile(b[0], 0.5), quantile(b[1], 0.5), quantile(b[2], 0.5)
	}
	return s
}

// quantile is the nearest-rank q-quantile of xs (0 for none); xs is not
// changed.
func quantile(xs []time.Duration, q float64) time.Duration {
	return iquantile.Select(slices.Clone(xs), q)
}

// Quantile is the nearest-rank q-quantile (0 ≤ q ≤ 1) of xs, 0 for none.
func Quantile(xs []time.Duration, q float64) time.Duration { return quantile(xs, q) }
