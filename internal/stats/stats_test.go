package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ar1 returns n values of x_t = mu + phi (x_{t-1} − mu) + e_t, e_t ~ N(0, 1),
// started from the stationary distribution.
func ar1(r *rand.Rand, n int, mu, phi float64) []float64 {
	xs := make([]float64, n)
	x := r.NormFloat64() / math.Sqrt(1-phi*phi)
	for i := range xs {
		xs[i] = mu + x
		x = phi*x + r.NormFloat64()
	}
	return xs
}

// coverage returns how often the 95 % interval (batch means, and as if
// independent) covers mu over reps seeded series.
func coverage(seed uint64, reps, n int, phi float64) (bm, naive float64) {
	const mu = 100
	var hit, hitNaive int
	for i := range reps {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		m := BatchMeans(ar1(r, n, mu, phi))
		if math.Abs(m.Mean-mu) <= m.HalfWidth() {
			hit++
		}
		if math.Abs(m.Mean-mu) <= TQuantile(0.975, float64(n-1))*m.NaiveSE {
			hitNaive++
		}
	}
	return float64(hit) / float64(reps), float64(hitNaive) / float64(reps)
}

// TestBatchMeansCoverage: on AR(1) series with a known mean, the batch-means
// interval covers it at about the nominal 95 % over many seeded series
// (deterministic: fixed seeds), where the interval that takes the values as
// independent does not once they are correlated.
func TestBatchMeansCoverage(t *testing.T) {
	cases := []struct {
		phi      float64
		n        int
		lo, hi   float64 // accepted batch-means coverage
		naiveMax float64 // the independent interval's coverage is below this
	}{
		{0, 400, 0.93, 0.97, 1},
		{0.5, 1000, 0.925, 0.97, 0.80},
		{0.8, 2500, 0.91, 0.97, 0.62},
		{0.5, 30, 0.88, 0.97, 0.85}, // a demo trace's 30 requests: 5 batches
	}
	for _, c := range cases {
		bm, naive := coverage(36, 2000, c.n, c.phi)
		t.Logf("AR(1) phi %.1f, n %d: batch-means coverage %.3f, independent %.3f", c.phi, c.n, bm, naive)
		if bm < c.lo || bm > c.hi {
			t.Errorf("phi %.1f n %d: batch-means coverage %.3f, want %.3f–%.3f", c.phi, c.n, bm, c.lo, c.hi)
		}
		if naive >= c.naiveMax {
			t.Errorf("phi %.1f n %d: the independent interval covers %.3f, want below %.2f (the test does not exercise correlation)", c.phi, c.n, naive, c.naiveMax)
		}
	}
}

func TestBatchMeansIndependent(t *testing.T) {
	// equal to s/√n in expectation for independent values; and exact
	// arithmetic on a small series
	m := BatchMeans([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	if m.Mean != 5 || m.Batches != 3 || m.N != 9 {
		t.Fatalf("BatchMeans = %+v", m)
	}
	// batch means 2, 5, 8: Σ 3·(−3, 0, 3)² / 2 = 27; SE = √(27/9) = √3
	if math.Abs(m.SE-math.Sqrt(3)) > 1e-12 {
		t.Errorf("SE = %v, want √3", m.SE)
	}
	if m := BatchMeans([]float64{1, 2, 3}); m.OK() || m.Mean != 2 {
		t.Errorf("3 values: %+v, want a mean and no SE", m)
	}
	if m := BatchMeans(nil); !math.IsNaN(m.Mean) {
		t.Errorf("no values: mean %v", m.Mean)
	}
}

func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{
		{1, 12.7062}, {1.6, 12.7062}, {2, 4.3027}, {2.9, 4.3027}, {3, 3.1824}, {4, 2.7764}, {5, 2.5706}, {10, 2.2281}, {30, 2.0423}, {1e6, 1.9600},
	} {
		if got := TQuantile(0.975, c.df); math.Abs(got-c.want) > 0.004 {
			t.Errorf("t(0.975, %g) = %.4f, want %.4f", c.df, got, c.want)
		}
	}
}

func TestWilson(t *testing.T) {
	// 10 of 100: 5.52–17.44 % (Wilson 1927; as jfr's churn report)
	lo, hi := Wilson(10, 100)
	if math.Abs(lo-0.0552) > 5e-4 || math.Abs(hi-0.1744) > 5e-4 {
		t.Errorf("Wilson(10, 100) = %.4f–%.4f", lo, hi)
	}
	// halving the effective count keeps the share and widens the interval
	lo2, hi2 := Wilson(5, 50)
	if !(lo2 < lo && hi2 > hi) {
		t.Errorf("Wilson(5, 50) = %.4f–%.4f, not wider than %.4f–%.4f", lo2, hi2, lo, hi)
	}
	if lo, hi := Wilson(0, 0); lo != 0 || hi != 0 {
		t.Errorf("Wilson(0, 0) = %v–%v", lo, hi)
	}
}

// TestShareDesignEffect: samples in runs of the same class (bursts) count
// as fewer independent observations; independent ones as all of them.
func TestShareDesignEffect(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 3))
	iid := make([]bool, 2000)
	for i := range iid {
		iid[i] = r.Float64() < 0.2
	}
	if d := ShareDesignEffect(iid); d > 1.5 {
		t.Errorf("independent samples: design effect %.2f, want about 1", d)
	}
	// runs of 10 samples of one class: about 10 times fewer observations
	runs := make([]bool, 2000)
	for i := 0; i < len(runs); i += 10 {
		v := r.Float64() < 0.2
		for j := i; j < i+10; j++ {
			runs[j] = v
		}
	}
	if d := ShareDesignEffect(runs); d < 5 || d > 20 {
		t.Errorf("runs of 10: design effect %.2f, want about 10", d)
	}
	if d := ShareDesignEffect(make([]bool, 100)); d != 1 {
		t.Errorf("no variation: design effect %v, want 1", d)
	}
}
