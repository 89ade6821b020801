package render

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/stats"
)

// latencies returns n latencies (ns) around mean ms with sd ms, AR(1) with
// phi, seeded.
func latencies(seed uint64, n int, mean, sd, phi float64) []int64 {
	r := rand.New(rand.NewPCG(seed, 36))
	out := make([]int64, n)
	x := r.NormFloat64()
	for i := range out {
		out[i] = int64((mean + sd*x) * 1e6)
		x = phi*x + math.Sqrt(1-phi*phi)*r.NormFloat64()
	}
	return out
}

func meanMs(ns []int64) float64 {
	var s float64
	for _, v := range ns {
		s += float64(v)
	}
	return s / float64(len(ns)) / 1e6
}

// comparison compares a prediction whose per-request series is pred with
// the measurement after.
func comparison(t *testing.T, pred, after []int64, miss float64) *PredictionCheck {
	t.Helper()
	before := &Report{Groups: []Group{{Name: "request", Requests: Requests{Count: len(pred), rps: 20},
		Predictions: []Prediction{{Spec: "remove=x", Mean: msd(meanMs(pred)), SimulatedMean: msd(meanMs(pred))}}}}}
	a := &Report{Groups: []Group{{Name: "request", Requests: Requests{Count: len(after), Mean: msd(meanMs(after)), rps: 20}}}}
	c, err := CompareSamples(before, a, miss, &Samples{After: map[string][]int64{"request": after}, Predicted: map[string][][]int64{"request": {pred}}})
	if err != nil {
		t.Fatal(err)
	}
	return &c.Predictions[0]
}

// TestCompareVerdict: hit when the error's interval is inside the bar,
// miss when wholly outside, inconclusive when it crosses it, with what
// would decide it.
func TestCompareVerdict(t *testing.T) {
	after := latencies(1, 400, 100, 10, 0.5)
	cases := []struct {
		name    string
		pred    []int64
		miss    float64
		verdict string
	}{
		{"the measurement itself", latencies(1, 400, 100, 10, 0.5), 5, VerdictHit},
		{"far off", latencies(3, 400, 120, 10, 0.5), 5, VerdictMiss},
		{"near the bar", latencies(4, 400, 105, 10, 0.5), 5, VerdictInconclusive},
	}
	for _, c := range cases {
		p := comparison(t, c.pred, after, c.miss)
		t.Logf("%s: error %.2f %% [%.2f, %.2f] %s %s", c.name, p.ErrorPct, *p.ErrorLowPct, *p.ErrorHighPct, p.Verdict, p.Decide)
		if p.Verdict != c.verdict {
			t.Errorf("%s: verdict %q, error %.2f %% in [%.2f, %.2f], want %q", c.name, p.Verdict, p.ErrorPct, *p.ErrorLowPct, *p.ErrorHighPct, c.verdict)
		}
		if *p.ErrorLowPct > p.ErrorPct || *p.ErrorHighPct < p.ErrorPct || p.MeasuredLow.Ms() > p.MeasuredMean.Ms() || p.PredictedHigh.Ms() < p.PredictedMean.Ms() {
			t.Errorf("%s: intervals do not hold the estimates: %+v", c.name, p)
		}
		if (c.verdict == VerdictInconclusive) != (p.Decide != "" && p.MoreRequests > 1) {
			t.Errorf("%s: decide %q, factor %v", c.name, p.Decide, p.MoreRequests)
		}
	}
	// The autocorrelation widens the interval: the same values shuffled
	// (independent) give a narrower one.
	corr := comparison(t, latencies(2, 400, 100, 10, 0.9), after, 5)
	shuffled := latencies(2, 400, 100, 10, 0.9)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	ind := comparison(t, shuffled, after, 5)
	wc := (corr.PredictedHigh.Ms() - corr.PredictedLow.Ms()) / 2
	wi := (ind.PredictedHigh.Ms() - ind.PredictedLow.Ms()) / 2
	if wc < 1.5*wi {
		t.Errorf("AR(1) 0.9: predicted half-width %.2f ms, shuffled %.2f ms; want the correlated one much wider", wc, wi)
	}
}

// TestCompareTooFew: fewer requests than an interval needs is
// inconclusive and says why; without series the verdict is the point
// estimate's.
func TestCompareTooFew(t *testing.T) {
	p := comparison(t, latencies(2, 3, 100, 10, 0), latencies(1, 3, 100, 10, 0), 5)
	if p.Verdict != VerdictInconclusive || !strings.Contains(p.Decide, "too few requests") || p.ErrorLowPct != nil {
		t.Errorf("3 requests: %+v", p)
	}
	before := &Report{Groups: []Group{{Name: "request", Predictions: []Prediction{{Spec: "remove=x", Mean: msd(104)}}}}}
	after := &Report{Groups: []Group{{Name: "request", Requests: Requests{Mean: msd(100)}}}}
	c, err := Compare(before, after, 5)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Predictions[0]; p.Verdict != VerdictHit || p.ErrorLowPct != nil || p.Miss {
		t.Errorf("no series: %+v, want a hit on the point estimate and no interval", p)
	}
}

// TestCompareCapped: a prediction queueing at a throughput cap keeps the
// simulated mean's relative error.
func TestCompareCapped(t *testing.T) {
	pred := latencies(2, 400, 50, 5, 0)
	after := latencies(1, 400, 100, 10, 0)
	before := &Report{Groups: []Group{{Name: "request", Requests: Requests{Count: 400},
		Predictions: []Prediction{{Spec: "remove=x", Mean: msd(2 * meanMs(pred)), SimulatedMean: msd(meanMs(pred)), Queue: msd(meanMs(pred))}}}}}
	a := &Report{Groups: []Group{{Name: "request", Requests: Requests{Count: 400, Mean: msd(meanMs(after))}}}}
	c, err := CompareSamples(before, a, 5, &Samples{After: map[string][]int64{"request": after}, Predicted: map[string][][]int64{"request": {pred}}})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Predictions[0]
	uncapped := comparison(t, pred, after, 5)
	w, w0 := p.PredictedHigh.Ms()-p.PredictedLow.Ms(), uncapped.PredictedHigh.Ms()-uncapped.PredictedLow.Ms()
	if math.Abs(w-2*w0) > 0.01 {
		t.Errorf("capped at twice the simulated mean: interval width %.3f ms, want twice %.3f", w, w0)
	}
}

// TestCompareEngine: a prediction the engine made (Method set) is judged
// with the engine's own standard error, not a series of Samples.Predicted
// (which is then ignored), and one the engine gave no interval is
// inconclusive, saying why.
func TestCompareEngine(t *testing.T) {
	after := latencies(1, 400, 100, 10, 0.5)
	a := &Report{Groups: []Group{{Name: "request", Requests: Requests{Count: len(after), Mean: msd(meanMs(after)), rps: 20}}}}
	judge := func(p Prediction) PredictionCheck {
		t.Helper()
		before := &Report{Groups: []Group{{Name: "request", Requests: Requests{Count: 400, rps: 20}, Predictions: []Prediction{p}}}}
		wide := latencies(9, 400, 100, 80, 0) // ignored: the engine's SE stands
		c, err := CompareSamples(before, a, 5, &Samples{After: map[string][]int64{"request": after}, Predicted: map[string][][]int64{"request": {wide}}})
		if err != nil {
			t.Fatal(err)
		}
		return c.Predictions[0]
	}
	p := Prediction{Spec: "scale=x:0.5", Mean: msd(meanMs(after)), Method: "queueing model", Why: "queue at pool p", se: 0.2e6, df: 20, interval: true}
	pc := judge(p)
	if pc.Verdict != VerdictHit || pc.Method != "queueing model" || pc.Why != "queue at pool p" || pc.PredictedHigh == nil {
		t.Fatalf("engine's SE 0.2 ms: %+v, want a hit with the method and an interval", pc)
	}
	if h := (pc.PredictedHigh.Ms() - pc.PredictedLow.Ms()) / 2; math.Abs(h-0.2*stats.TQuantile(0.975, 20)) > 0.01 {
		t.Errorf("predicted half-width %.3f ms, want t(20)·0.2 = %.3f", h, 0.2*stats.TQuantile(0.975, 20))
	}
	p.interval, p.Why = false, "queue at pool p; no interval: the model saturates if its demands are off by 1 %"
	if pc := judge(p); pc.Verdict != VerdictInconclusive || !strings.Contains(pc.Decide, "the model saturates") {
		t.Errorf("no interval: %+v, want inconclusive saying why", pc)
	}
}
