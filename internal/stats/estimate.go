package stats

import "math"

// Estimate is a value with its standard error and the degrees of freedom
// of that error: what a derived quantity (a ratio, an error in per cent, a
// gain) carries from the means it is computed from.
type Estimate struct {
	Value float64
	// SE is the standard error of Value: NaN when there is none (too few
	// values), 0 when Value is exact.
	SE float64
	// DF is the degrees of freedom of SE; +Inf for a normal quantile.
	DF float64
}

// Estimate returns the mean as an Estimate (SE NaN when it has none).
func (m Mean) Estimate() Estimate {
	if !m.OK() {
		return Estimate{Value: m.Mean, SE: math.NaN(), DF: math.NaN()}
	}
	return Estimate{Value: m.Mean, SE: m.SE, DF: m.DF()}
}

// OK reports whether the estimate has a standard error.
func (e Estimate) OK() bool {
	return !math.IsNaN(e.Value) && !math.IsNaN(e.SE) && (e.SE == 0 || e.DF >= 1)
}

// HalfWidth returns the half-width of the 95 % interval, t(0.975, DF)·SE:
// 0 for an exact value, NaN without an SE.
func (e Estimate) HalfWidth() float64 {
	switch {
	case !e.OK():
		return math.NaN()
	case e.SE == 0:
		return 0
	}
	return TQuantile(0.975, e.DF) * e.SE
}

// Interval returns the 95 % interval Value ± HalfWidth (NaN, NaN without
// an SE). Judged against a band, a two-sided 95 % interval wholly above
// the band's upper edge happens by chance at most 2.5 % of the time when
// the truth sits on the edge (the same below the lower edge).
func (e Estimate) Interval() (lo, hi float64) {
	h := e.HalfWidth()
	return e.Value - h, e.Value + h
}

// Affine returns k·e + c: a ratio as a per cent (k 100), an error
// (100·R − 100), a gain (100 − 100·R). The SE scales by |k|.
func (e Estimate) Affine(k, c float64) Estimate {
	return Estimate{Value: k*e.Value + c, SE: math.Abs(k) * e.SE, DF: e.DF}
}

// WithValue returns e centred on v with the same SE: for a figure computed
// elsewhere (a report's rounded number, a simulation's mean) whose
// sampling error the series at hand gives.
func (e Estimate) WithValue(v float64) Estimate {
	e.Value = v
	return e
}

// RatioOfMeans estimates R = x̄ / ȳ over pairs (x_i, y_i) measured on the
// same units in the order they were observed (a term's time and the
// latency of each request, in the order the requests ended). Its standard
// error is the delta method's for a ratio estimator: the residuals
// d_i = x_i − R·y_i have mean 0 and Var(R̂) ≈ Var(d̄) / ȳ², and Var(d̄) is
// taken from batch means over the residuals in order, so neighbouring
// units that are slow together are in it (BatchMeans). The residuals carry
// the covariance of x and y: when x follows y closely (a term that tiles
// the latency) the ratio is far more precise than either mean. SE is NaN
// with fewer than MinSeries pairs, or when the lengths differ or ȳ is 0.
func RatioOfMeans(xs, ys []float64) Estimate {
	out := Estimate{Value: math.NaN(), SE: math.NaN(), DF: math.NaN()}
	if len(xs) != len(ys) || len(xs) == 0 {
		return out
	}
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	if sy == 0 {
		return out
	}
	r := sx / sy
	out.Value = r
	d := make([]float64, len(xs))
	for i := range xs {
		d[i] = xs[i] - r*ys[i]
	}
	m := BatchMeans(d)
	if !m.OK() {
		return out
	}
	ybar := sy / float64(len(ys))
	out.SE, out.DF = m.SE/math.Abs(ybar), m.DF()
	if out.SE == 0 {
		out.DF = math.Inf(1)
	}
	return out
}

// Quotient estimates a / b of two independent estimates (two windows,
// two runs) by the delta method: a/b has the relative variance
// (SE_a/a)² + (SE_b/b)², and its degrees of freedom are
// Welch–Satterthwaite's over the two relative terms. SE is NaN when either
// has none or b is 0.
func Quotient(a, b Estimate) Estimate {
	out := Estimate{Value: math.NaN(), SE: math.NaN(), DF: math.NaN()}
	if b.Value == 0 || math.IsNaN(a.Value) || math.IsNaN(b.Value) {
		return out
	}
	out.Value = a.Value / b.Value
	if !a.OK() || !b.OK() {
		return out
	}
	if a.Value == 0 && a.SE > 0 {
		// no relative error of a zero: the absolute one over b
		out.SE, out.DF = a.SE/math.Abs(b.Value), a.DF
		return out
	}
	ra, rb := 0.0, b.SE/math.Abs(b.Value)
	if a.Value != 0 {
		ra = a.SE / math.Abs(a.Value)
	}
	out.SE = math.Abs(out.Value) * math.Hypot(ra, rb)
	out.DF = Welch(ra, a.DF, rb, b.DF)
	return out
}
