package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestRatioOfMeansKnown: a numerator that is a fixed share of each
// denominator is known exactly (SE 0); a small series by hand.
func TestRatioOfMeansKnown(t *testing.T) {
	var xs, ys []float64
	for i := 1; i <= 16; i++ {
		ys = append(ys, float64(i))
		xs = append(xs, 0.9*float64(i))
	}
	e := RatioOfMeans(xs, ys)
	if !near(e.Value, 0.9, 1e-12) || e.SE > 1e-12 || !e.OK() {
		t.Fatalf("x = 0.9 y: %+v, want 0.9 exactly", e)
	}
	if lo, hi := e.Interval(); !near(lo, 0.9, 1e-9) || !near(hi, 0.9, 1e-9) {
		t.Errorf("interval %v–%v, want 0.9–0.9", lo, hi)
	}
	// x = 1..9, y = 2 each: R = 5/2; residuals x − 2.5·2 = −4..4,
	// batch means −3, 0, 3 (3 batches of 3): σ²_BM = Σ 3·9·2 / 2 = 27,
	// SE(d̄) = √(27/9) = √3, SE(R) = √3 / ȳ = √3 / 2, 2 degrees of freedom.
	xs, ys = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, []float64{2, 2, 2, 2, 2, 2, 2, 2, 2}
	e = RatioOfMeans(xs, ys)
	if !near(e.Value, 2.5, 1e-12) || !near(e.SE, math.Sqrt(3)/2, 1e-12) || e.DF != 2 {
		t.Errorf("by hand: %+v, want 2.5, SE √3/2, 2 df", e)
	}
	lo, hi := e.Interval()
	h := (2*0.975 - 1) / math.Sqrt(2*0.975*0.025) * math.Sqrt(3) / 2 // t(0.975, 2) exactly
	if !near(lo, 2.5-h, 1e-9) || !near(hi, 2.5+h, 1e-9) {
		t.Errorf("interval %v–%v, want 2.5 ± %v", lo, hi, h)
	}
	for _, bad := range [][2][]float64{{{1, 2, 3}, {1, 2, 3}}, {{1, 2, 3, 4}, {1, 2, 3}}, {{1, 2, 3, 4}, {0, 0, 0, 0}}} {
		if e := RatioOfMeans(bad[0], bad[1]); e.OK() {
			t.Errorf("RatioOfMeans(%v, %v) = %+v, want no SE", bad[0], bad[1], e)
		}
	}
}

// TestRatioOfMeansCoverage: over seeded pairs of correlated series (a
// request's term and its latency, both slow together in stretches), the
// ratio's 95 % interval covers the true ratio at about 95 %.
func TestRatioOfMeansCoverage(t *testing.T) {
	const reps, n = 2000, 400
	const mu, share = 100.0, 0.6 // E[y] = 100, E[x] = 60: R = 0.6
	hit := 0
	for i := range reps {
		r := rand.New(rand.NewPCG(30, uint64(i)))
		ys := ar1(r, n, mu, 0.5)
		xs := make([]float64, n)
		noise := ar1(r, n, 0, 0.5)
		for j := range xs {
			xs[j] = share*ys[j] + 2*noise[j]
		}
		e := RatioOfMeans(xs, ys)
		if lo, hi := e.Interval(); lo <= share && share <= hi {
			hit++
		}
	}
	cov := float64(hit) / reps
	t.Logf("ratio of correlated means, n %d: coverage %.3f", n, cov)
	if cov < 0.92 || cov > 0.97 {
		t.Errorf("coverage %.3f, want about 0.95", cov)
	}
}

// TestQuotientKnown: 100 ± 1 over 50 ± 0.5 (30 df each) is 2 with a
// relative SE of √(0.01² + 0.01²) and Welch's 60 df.
func TestQuotientKnown(t *testing.T) {
	q := Quotient(Estimate{100, 1, 30}, Estimate{50, 0.5, 30})
	if !near(q.Value, 2, 1e-12) || !near(q.SE, 2*math.Sqrt2*0.01, 1e-12) || !near(q.DF, 60, 1e-9) {
		t.Errorf("Quotient = %+v, want 2, SE %v, 60 df", q, 2*math.Sqrt2*0.01)
	}
	// a gain in per cent: 100 − 100·(after / before)
	g := Quotient(Estimate{75, 0.75, 30}, Estimate{100, 1, 30}).Affine(-100, 100)
	if !near(g.Value, 25, 1e-9) || !near(g.SE, 75*math.Sqrt2*0.01, 1e-9) {
		t.Errorf("gain = %+v, want 25 %%, SE %v", g, 75*math.Sqrt2*0.01)
	}
	if q := Quotient(Estimate{1, 0, math.Inf(1)}, Estimate{2, 0, math.Inf(1)}); q.Value != 0.5 || q.SE != 0 || q.HalfWidth() != 0 {
		t.Errorf("exact over exact: %+v", q)
	}
	if q := Quotient(Estimate{1, math.NaN(), math.NaN()}, Estimate{2, 0.1, 10}); q.OK() || q.Value != 0.5 {
		t.Errorf("no SE over an estimate: %+v, want 0.5 without an SE", q)
	}
	if q := Quotient(Estimate{0, 0.2, 10}, Estimate{2, 0.1, 10}); q.Value != 0 || !near(q.SE, 0.1, 1e-12) || q.DF != 10 {
		t.Errorf("0 ± 0.2 over 2: %+v, want 0 ± 0.1", q)
	}
	if q := Quotient(Estimate{1, 0.1, 10}, Estimate{0, 0.1, 10}); !math.IsNaN(q.Value) {
		t.Errorf("over 0: %+v, want NaN", q)
	}
}

// TestQuotientCoverage: the quotient of two independent batch-means means
// (two windows of correlated requests) covers the true quotient at about
// 95 % over seeded series.
func TestQuotientCoverage(t *testing.T) {
	const reps, n = 2000, 400
	hit := 0
	for i := range reps {
		r := rand.New(rand.NewPCG(31, uint64(i)))
		a := BatchMeans(ar1(r, n, 108, 0.5)).Estimate()
		b := BatchMeans(ar1(r, n, 160, 0.5)).Estimate()
		g := Quotient(a, b).Affine(-100, 100) // the gain, 32.5 %
		if lo, hi := g.Interval(); lo <= 32.5 && 32.5 <= hi {
			hit++
		}
	}
	cov := float64(hit) / reps
	t.Logf("gain of two independent windows, n %d each: coverage %.3f", n, cov)
	if cov < 0.92 || cov > 0.97 {
		t.Errorf("coverage %.3f, want about 0.95", cov)
	}
}

func TestMeanEstimate(t *testing.T) {
	e := BatchMeans([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}).Estimate()
	if e.Value != 5 || !near(e.SE, math.Sqrt(3), 1e-12) || e.DF != 2 {
		t.Errorf("Estimate = %+v", e)
	}
	if e := BatchMeans([]float64{1, 2}).Estimate(); e.OK() || e.Value != 1.5 {
		t.Errorf("two values: %+v, want a value without an SE", e)
	}
	if lo, hi := (Estimate{Value: 3, SE: math.NaN()}).Interval(); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("no SE: interval %v–%v, want NaN", lo, hi)
	}
	if e := (Estimate{2, 0.5, 10}).WithValue(3); e.Value != 3 || e.SE != 0.5 {
		t.Errorf("WithValue: %+v", e)
	}
}
