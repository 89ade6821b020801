package jfrtest

import "math"

// The live tests of the timing tier judge what one run measured with the
// rules below, each at a stated α, instead of a bare threshold on one draw.

// Z returns the standard normal quantile that a draw exceeds with
// probability alpha (one-sided): Z(0.05) = 1.645, Z(0.001) = 3.090.
func Z(alpha float64) float64 { return math.Sqrt2 * math.Erfinv(1-2*alpha) }

// MeanSE returns the mean of xs and its standard error (the sample
// standard deviation over √n); the error is 0 for fewer than two values.
func MeanSE(xs []float64) (mean, se float64) {
	n := float64(len(xs))
	if n == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if n < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

// ProportionsZ is the two-proportion z statistic for the hypothesis that
// share k1/n1 is no larger than k2/n2 (pooled standard error): a large
// positive value says the first is larger. It is 0 when either count is 0
// or both shares are 0 or 1.
func ProportionsZ(k1, n1, k2, n2 int64) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 0
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	p := float64(k1+k2) / float64(n1+n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return 0
	}
	return (p1 - p2) / se
}

// ProportionsPower is the probability that ProportionsZ exceeds Z(alpha)
// when the true shares are p1 and p2 and the counts n1 and n2: 1 minus a
// live test's chance to fail although the difference is real.
func ProportionsPower(p1, p2 float64, n1, n2 int64, alpha float64) float64 {
	p := (p1*float64(n1) + p2*float64(n2)) / float64(n1+n2)
	se0 := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	se1 := math.Sqrt(p1*(1-p1)/float64(n1) + p2*(1-p2)/float64(n2))
	if se1 == 0 {
		return 1
	}
	return 0.5 * math.Erfc(-((p1-p2)-Z(alpha)*se0)/se1/math.Sqrt2)
}
