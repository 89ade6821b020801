package render

import (
	"fmt"
	"math"

	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/internal/units"
)

// meanSE is a mean's standard error from its per-request series (batch
// means), with its degrees of freedom. n is the series' length; ok is
// false when there is none or it is too short for an SE.
type meanSE struct {
	se, df float64
	n      int
	ok     bool
}

func seriesMean(ns []int64) meanSE {
	if len(ns) == 0 {
		return meanSE{}
	}
	xs := make([]float64, len(ns))
	for i, v := range ns {
		xs[i] = float64(v)
	}
	m := stats.BatchMeans(xs)
	if !m.OK() {
		return meanSE{n: len(ns)}
	}
	return meanSE{se: m.SE, df: m.DF(), n: len(ns), ok: true}
}

// halfWidth is the 95 % half-width.
func (m meanSE) halfWidth() float64 {
	if m.se == 0 {
		return 0
	}
	return stats.TQuantile(0.975, m.df) * m.se
}

// predicted is the predicted mean's standard error, from the spread of
// its requests' predicted latencies. A prediction that queues at a
// throughput cap (Queue > 0) keeps the simulated mean's relative error.
func predicted(p Prediction, ns []int64) meanSE {
	e := seriesMean(ns)
	if e.ok && p.Queue > 0 && p.SimulatedMean > 0 {
		e.se *= float64(p.Mean) / float64(p.SimulatedMean)
	}
	return e
}

// engineSE is the standard error the prediction engine gave p's mean
// (whatif.Outcome: batch means over the exact per-request series, the
// queueing model's sensitivity added); n is the first trace's requests.
func engineSE(p Prediction, n int) meanSE {
	return meanSE{se: p.se, df: p.df, n: n, ok: p.interval}
}

// judge sets pc's intervals and verdict. The error D = predicted −
// measured has the standard error √(SE_P² + SE_M²) (the two traces are
// independent) with Welch–Satterthwaite degrees of freedom; the bar is
// ±MissPct of the measured mean. Without series (samples false) the
// verdict is the point estimate's.
func (c *Comparison) judge(pc *PredictionCheck, p Prediction, meas, pred meanSE, samples bool) {
	if !samples {
		pc.Verdict = VerdictHit
		if pc.Miss {
			pc.Verdict = VerdictMiss
		}
		return
	}
	if meas.ok && pred.n >= stats.MinSeries && !pred.ok && p.Method != "" {
		pc.Verdict = VerdictInconclusive
		pc.Decide = fmt.Sprintf("the prediction has no interval (%s)", p.Why)
		return
	}
	if !meas.ok || (pred.n > 0 && !pred.ok) {
		pc.Verdict = VerdictInconclusive
		pc.Decide = fmt.Sprintf("too few requests for an interval (first trace %d, second %d; at least %d each)", c.Before.Count, c.After.Count, stats.MinSeries)
		return
	}
	m, pm := float64(pc.MeasuredMean), float64(pc.PredictedMean)
	hm := meas.halfWidth()
	pc.MeasuredLow, pc.MeasuredHigh = durPtr(durOf(m-hm)), durPtr(durOf(m+hm))
	se2 := meas.se * meas.se
	df := meas.df
	if pred.ok {
		hp := pred.halfWidth()
		pc.PredictedLow, pc.PredictedHigh = durPtr(durOf(pm-hp)), durPtr(durOf(pm+hp))
		se2 += pred.se * pred.se
		df = stats.Welch(meas.se, meas.df, pred.se, pred.df)
	}
	h := 0.0
	if se2 > 0 {
		h = stats.TQuantile(0.975, df) * math.Sqrt(se2)
	}
	d, bar := pm-m, c.MissPct/100*m
	lo, hi := units.Round3(100*(d-h)/m), units.Round3(100*(d+h)/m)
	pc.ErrorLowPct, pc.ErrorHighPct = &lo, &hi
	switch {
	case d-h >= -bar && d+h <= bar:
		pc.Verdict = VerdictHit
	case d-h > bar || d+h < -bar:
		pc.Verdict = VerdictMiss
	default:
		pc.Verdict = VerdictInconclusive
		c.decide(pc, d, h, bar)
	}
}

// maxMore is the largest factor of requests decide names; beyond it the
// estimate sits on the bar for every practical purpose.
const maxMore = 100

// decide says what would decide an inconclusive verdict: the interval's
// half-width h shrinks as 1/√n, so it must fall below the distance of the
// estimate d from the bar.
func (c *Comparison) decide(pc *PredictionCheck, d, h, bar float64) {
	side := bar
	if d < 0 {
		side = -bar
	}
	cross := fmt.Sprintf("the error's 95 %% interval, %+.1f to %+.1f %%, crosses %+g %%", *pc.ErrorLowPct, *pc.ErrorHighPct, math.Copysign(c.MissPct, side))
	need := math.Abs(math.Abs(d) - bar)
	f := math.Inf(1)
	if need > 0 {
		f = (h / need) * (h / need)
	}
	if f > maxMore {
		pc.Decide = cross + fmt.Sprintf("; the estimate lies %.1f %% from the bar, so no practical window decides it (more than %d× as many requests)", 100*need/float64(pc.MeasuredMean), maxMore)
		return
	}
	f = math.Ceil(10*f) / 10
	pc.MoreRequests = f
	nb, na := int(math.Ceil(f*float64(c.Before.Count))), int(math.Ceil(f*float64(c.After.Count)))
	pc.Decide = cross + fmt.Sprintf("; about %.1f× as many requests in each trace would decide it: ≈%d before and ≈%d after", f, nb, na)
	if c.Before.rps > 0 && c.After.rps > 0 {
		pc.Decide += fmt.Sprintf(" (windows of ≈%.1f s and ≈%.1f s at these rates)", float64(nb)/c.Before.rps, float64(na)/c.After.rps)
	}
}
