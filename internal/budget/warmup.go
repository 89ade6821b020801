package budget

import (
	"math"

	estim "github.com/latscope/latscope/internal/stats"
)

// MinWarmupRequests is the fewest requests of a type whose warm-up ratio
// is judged on its interval. Their first tenth is then at least 16
// requests, 4 batches of batch means, and its mean's interval has 3
// degrees of freedom (t 3.18). With 2 batches (fewer than 90 requests) t
// is 12.7 and with 3, 4.30: the interval would contain the bar whatever
// the requests did (on seeded lognormal series without warm-up, σ 0.5 of
// the log, in 49–80 % of windows of 20 to 159 requests; 33–48 % at 160:
// TestWarmupMinimum).
const MinWarmupRequests = 160

// WarmupHead is the fewest requests the first tenth holds when there are
// fewer than 50, for the point ratio said with too few requests.
const WarmupHead = 5

// WarmupVerdict is what the warm-up check concludes.
type WarmupVerdict uint8

// Warm-up verdicts.
const (
	WarmupNone         WarmupVerdict = iota // the ratio's interval lies below the bar, or too few requests and no sign of warm-up
	WarmupFires                             // the whole interval lies above the bar
	WarmupInconclusive                      // the interval contains the bar
	WarmupTooFew                            // fewer than MinWarmupRequests requests, and the first ones slower by more than the bar
)

// Warmup is the warm-up check of one request type: the mean latency of
// its first tenth of requests by start (at least WarmupHead) over the
// mean of the rest, each mean with its batch-means standard error (the
// requests in start order: neighbours are slow together), and their
// quotient's 95 % interval judged against WarmupRatio (docs/method.md §6).
type Warmup struct {
	N, Head     int            // requests; those in the first tenth
	First, Rest estim.Estimate // mean latencies, ns
	Ratio       estim.Estimate // First / Rest
	Low, High   float64        // Ratio's 95 % interval; NaN without one
	Verdict     WarmupVerdict
}

// JudgeWarmup judges warm-up on a request type's latencies (ns) in the
// order the requests began. With fewer than MinWarmupRequests it gives a
// verdict only when the first requests look slow (WarmupTooFew): too few
// to say, where a point ratio would have guessed.
func JudgeWarmup(lat []float64) Warmup {
	n := len(lat)
	w := Warmup{N: n, Head: max(n/10, WarmupHead), Low: math.NaN(), High: math.NaN()}
	if n <= w.Head {
		return w
	}
	w.First = estim.BatchMeans(lat[:w.Head]).Estimate()
	w.Rest = estim.BatchMeans(lat[w.Head:]).Estimate()
	w.Ratio = estim.Quotient(w.First, w.Rest)
	if math.IsNaN(w.Ratio.Value) {
		return w
	}
	if n < MinWarmupRequests {
		if w.Ratio.Value > WarmupRatio {
			w.Verdict = WarmupTooFew
		}
		return w
	}
	w.Low, w.High = w.Ratio.Interval()
	// a ratio of two positive means is not below 0: with few batches the
	// delta method's symmetric interval can reach below it
	w.Low = max(w.Low, 0)
	switch {
	case math.IsNaN(w.Low):
		// no standard error (cannot happen from MinWarmupRequests):
		// judged as too few rather than on the point
		if w.Ratio.Value > WarmupRatio {
			w.Verdict = WarmupTooFew
		}
	case w.Low > WarmupRatio:
		w.Verdict = WarmupFires
	case w.High > WarmupRatio:
		w.Verdict = WarmupInconclusive
	}
	return w
}

// moreRequests is about how many times as many requests would move the
// interval's edge nearest the bar past it, the ratio and the spread of
// the requests staying put: the standard error narrows as 1/√f, and the
// degrees of freedom grow as √f (batch means take √n batches), so the t
// quantile shrinks too. 0 when the ratio is on the bar or a thousand
// times as many would not do.
func (w Warmup) moreRequests() float64 {
	r, se, df := w.Ratio.Value, w.Ratio.SE, w.Ratio.DF
	need := math.Abs(r - WarmupRatio)
	half := func(f float64) float64 { return estim.TQuantile(0.975, df*math.Sqrt(f)) * se / math.Sqrt(f) }
	if need == 0 || !(se > 0) || !(df >= 1) || half(1000) > need {
		return 0
	}
	lo, hi := 1.0, 1000.0 // half(lo) > need ≥ half(hi): the interval contains the bar now
	for hi-lo > 0.01*lo {
		if m := (lo + hi) / 2; half(m) > need {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}
