// Package stats holds the interval estimates that latscope's verdicts rest
// on (docs/method.md §13): the mean of an autocorrelated series by batch
// means, and a share of samples by the Wilson score interval, widened by
// the series' design effect when the samples come in correlated runs.
package stats

import "math"

// Confidence is the level of every interval latscope prints: 95 %.
const Confidence = 0.95

// Z95 is the standard normal quantile of 0.975.
const Z95 = 1.959963984540054

// MinSeries is the shortest series whose mean gets an interval: with fewer
// values there are fewer than two batches, and no spread to estimate.
const MinSeries = 4

// Mean is a series' mean with its standard error from batch means.
type Mean struct {
	N       int     // values
	Mean    float64 // their mean
	SE      float64 // standard error of Mean, autocorrelation included; NaN when N < MinSeries
	Batches int     // batches the SE rests on; the t quantile has Batches-1 degrees of freedom
	// NaiveSE is the standard error as if the values were independent
	// (s/√n); (SE/NaiveSE)² is the design effect.
	NaiveSE float64
}

// OK reports whether the mean has a standard error.
func (m Mean) OK() bool { return m.N >= MinSeries && !math.IsNaN(m.SE) }

// DF returns the degrees of freedom of the SE.
func (m Mean) DF() float64 { return float64(m.Batches - 1) }

// HalfWidth returns the half-width of the mean's 95 % interval.
func (m Mean) HalfWidth() float64 {
	if !m.OK() {
		return math.NaN()
	}
	return TQuantile(0.975, m.DF()) * m.SE
}

// DesignEffect returns the variance inflation over independent values,
// (SE/NaiveSE)²; 1 when it cannot be estimated.
func (m Mean) DesignEffect() float64 {
	if !m.OK() || m.NaiveSE == 0 {
		return 1
	}
	return (m.SE / m.NaiveSE) * (m.SE / m.NaiveSE)
}

// BatchMeans estimates the mean of xs, a series in the order it was
// observed (requests in completion order, samples in time order), and the
// standard error of that mean when neighbouring values are correlated:
// the non-overlapping batch means method (Schmeiser 1982) with ⌊√n⌋
// batches of (nearly) equal length (Flegal, Haran & Jones 2008). Each
// batch mean averages over the correlation within the batch, so the spread
// of the batch means carries it into the SE; with independent values the
// estimate agrees with s/√n. The SE has ⌊√n⌋−1 degrees of freedom.
func BatchMeans(xs []float64) Mean {
	n := len(xs)
	m := Mean{N: n, SE: math.NaN(), NaiveSE: math.NaN()}
	if n == 0 {
		m.Mean = math.NaN()
		return m
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	m.Mean = sum / float64(n)
	if n < MinSeries {
		return m
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m.Mean) * (x - m.Mean)
	}
	m.NaiveSE = math.Sqrt(ss / float64(n-1) / float64(n))
	b := int(math.Sqrt(float64(n)))
	// σ²_BM = Σ m_j (Ȳ_j − Ȳ)² / (b − 1), the variance of one value's
	// contribution with the correlation included; SE² = σ²_BM / n.
	var v float64
	for j := range b {
		lo, hi := j*n/b, (j+1)*n/b
		var s float64
		for _, x := range xs[lo:hi] {
			s += x
		}
		k := float64(hi - lo)
		d := s/k - m.Mean
		v += k * d * d
	}
	m.Batches = b
	m.SE = math.Sqrt(v / float64(b-1) / float64(n))
	return m
}

// Wilson returns the 95 % Wilson score interval of a share k/n. k and n
// may be fractional: an effective count, n divided by a design effect,
// keeps the share and widens the interval.
func Wilson(k, n float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 0
	}
	const z = 1.96 // as jfr's churn interval, so that the two agree to the digit
	p := k / n
	den := 1 + z*z/n
	mid := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	return max(0, mid-half), min(1, mid+half)
}

// ShareDesignEffect returns the design effect of a share measured on a
// series of 0/1 outcomes in time order: the batch-means variance over
// the binomial p(1−p), at least 1. Samples taken in bursts (a burst of a
// scheduler storm is several samples in a row of the same class) are
// fewer independent observations than their count; n / DesignEffect is
// their effective number. 1 when there is too little to estimate it, or
// no variation (p 0 or 1).
func ShareDesignEffect(outcomes []bool) float64 {
	if len(outcomes) < MinSeries {
		return 1
	}
	xs := make([]float64, len(outcomes))
	for i, o := range outcomes {
		if o {
			xs[i] = 1
		}
	}
	m := BatchMeans(xs)
	if !m.OK() || m.NaiveSE == 0 {
		return 1
	}
	return max(1, m.DesignEffect())
}

// TQuantile returns the p quantile of Student's t with df degrees of
// freedom (the normal's for df ≥ 1000 or infinite; a fractional df is
// rounded down): exact for 1 and 2
// degrees, otherwise Hill's expansion (Hill 1970, ACM Algorithm 396, its
// asymptotic series in 1/df), within 0.004 of the tables for df ≥ 3 (0.001 from 5) at
// p = 0.975.
func TQuantile(p, df float64) float64 {
	if math.IsNaN(df) || df < 1 {
		return math.NaN()
	}
	// a fractional df (Welch's) is rounded down: slightly conservative,
	// and the expansion below is only accurate on whole degrees from 3
	df = math.Floor(df)
	z := normQuantile(p)
	switch {
	case df == 1:
		return math.Tan(math.Pi * (p - 0.5))
	case df == 2:
		return (2*p - 1) / math.Sqrt(2*p*(1-p))
	case df >= 1000 || math.IsInf(df, 1):
		return z
	}
	z2 := z * z
	g1 := (z2 + 1) * z / 4
	g2 := ((5*z2+16)*z2 + 3) * z / 96
	g3 := (((3*z2+19)*z2+17)*z2 - 15) * z / 384
	g4 := ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) * z / 92160
	return z + g1/df + g2/(df*df) + g3/(df*df*df) + g4/(df*df*df*df)
}

// normQuantile is the standard normal quantile.
func normQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// Welch returns the degrees of freedom of the sum of two independent
// estimates with standard errors se1, se2 and degrees of freedom df1, df2
// (Welch–Satterthwaite).
func Welch(se1, df1, se2, df2 float64) float64 {
	a, b := se1*se1, se2*se2
	if a+b == 0 {
		return math.Inf(1)
	}
	den := 0.0
	if a > 0 {
		den += a * a / df1
	}
	if b > 0 {
		den += b * b / df2
	}
	return (a + b) * (a + b) / den
}
