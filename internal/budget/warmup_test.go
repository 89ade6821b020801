package budget

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// warmupSeries is n latencies (ns) in start order whose first tenth (at
// least WarmupHead) has ratio times the mean of the rest: lognormal around
// 10 ms (σ 0.5 of the log, a latency's skew), its log an AR(1) series of
// correlation rho, so that neighbouring requests are slow together.
func warmupSeries(r *rand.Rand, n int, ratio, rho float64) []float64 {
	const sigma = 0.5
	head := max(n/10, WarmupHead)
	out := make([]float64, n)
	z := r.NormFloat64()
	for i := range out {
		z = rho*z + math.Sqrt(1-rho*rho)*r.NormFloat64()
		m := 10e6
		if i < head {
			m *= ratio
		}
		out[i] = m * math.Exp(sigma*z-sigma*sigma/2)
	}
	return out
}

// verdicts judges reps seeded series and counts each verdict.
func verdicts(seed uint64, reps, n int, ratio, rho float64) map[WarmupVerdict]int {
	out := map[WarmupVerdict]int{}
	for i := range reps {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		out[JudgeWarmup(warmupSeries(r, n, ratio, rho)).Verdict]++
	}
	return out
}

// TestWarmupCoverage: with the true ratio exactly on the 1.5× bar, the
// finding fires only when the 95 % interval's lower edge is above it by
// chance: at most 2.5 % of series, here 1,000 of 400 correlated requests
// each, within the binomial bound at α 0.001 (2.5 ± 3.29·√(0.025·0.975/1000)
// %, 0.9–4.1 %). At a true ratio of 3 on 1,000 requests it fires in at least
// 95 %; at 1 (no warm-up) it says nothing in at least 95 %.
func TestWarmupCoverage(t *testing.T) {
	const reps = 1000
	bound := 3.29 * math.Sqrt(0.025*0.975/reps)
	on := verdicts(36, reps, 400, WarmupRatio, 0.5)
	rate := float64(on[WarmupFires]) / reps
	t.Logf("true ratio 1.5, 400 requests, AR(1) 0.5: fires %.1f %%, inconclusive %.1f %%, nothing %.1f %% (bound %.1f–%.1f %%)",
		100*rate, 100*float64(on[WarmupInconclusive])/reps, 100*float64(on[WarmupNone])/reps, 100*(0.025-bound), 100*(0.025+bound))
	if math.Abs(rate-0.025) > bound {
		t.Errorf("true ratio on the bar: fires in %.1f %% of series, want 2.5 ± %.1f %%", 100*rate, 100*bound)
	}
	if on[WarmupTooFew] != 0 {
		t.Errorf("400 requests judged too few %d times", on[WarmupTooFew])
	}
	// at the minimum, and with neighbours more strongly correlated: batch
	// means on 4 batches of 4 underestimate the spread when the series
	// is correlated over more than a batch, and the rate rises (logged)
	at := verdicts(42, reps, MinWarmupRequests, WarmupRatio, 0.5)
	if rate := float64(at[WarmupFires]) / reps; math.Abs(rate-0.025) > bound {
		t.Errorf("true ratio on the bar, %d requests: fires in %.1f %%, want 2.5 ± %.1f %%", MinWarmupRequests, 100*rate, 100*bound)
	} else {
		t.Logf("true ratio 1.5, %d requests, AR(1) 0.5: fires %.1f %%", MinWarmupRequests, 100*rate)
	}
	for _, n := range []int{MinWarmupRequests, 400, 1000} {
		v := verdicts(43, reps, n, WarmupRatio, 0.8)
		t.Logf("true ratio 1.5, %d requests, AR(1) 0.8: fires %.1f %%", n, 100*float64(v[WarmupFires])/reps)
	}
	hi := verdicts(37, reps, 1000, 3, 0.5)
	if rate := float64(hi[WarmupFires]) / reps; rate < 0.95 {
		t.Errorf("true ratio 3, 1000 requests: fires in %.1f %%, want ≥ 95 %%", 100*rate)
	} else {
		t.Logf("true ratio 3, 1000 requests: fires %.1f %%", 100*rate)
	}
	none := verdicts(38, reps, 1000, 1, 0.5)
	if rate := float64(none[WarmupNone]) / reps; rate < 0.95 {
		t.Errorf("true ratio 1, 1000 requests: nothing in %.1f %%, want ≥ 95 %% (%v)", 100*rate, none)
	} else {
		t.Logf("true ratio 1, 1000 requests: nothing %.1f %%, fires %d", 100*rate, none[WarmupFires])
	}
}

// TestWarmupFindings: the texts of the three verdicts, and too few
// requests said as such.
func TestWarmupFindings(t *testing.T) {
	steady := func(n int, first float64) []float64 {
		lat := make([]float64, n)
		for i := range lat {
			lat[i] = 10e6 + float64(i%7)*1e6
			if i < max(n/10, WarmupHead) {
				lat[i] *= first
			}
		}
		return lat
	}
	j := JudgeWarmup(steady(400, 4))
	f := goWording.WarmupFinding("GET /x", j)
	if j.Verdict != WarmupFires || f == nil || f.Kind != FindWarmup || !strings.HasPrefix(f.Text, goWording.WarmupText("GET /x", 40, j.First.Value, j.Rest.Value)+"; their ratio is 3.96× (95 % interval 3.89–4.03×, all of it above the 1.5× bar; docs/method.md §6)") {
		t.Fatalf("4× the rest on 400 requests: %+v %+v", j, f)
	}
	t.Log(f.Text)
	// a noisy head, 1.2× the rest: the interval contains the bar
	lat := steady(200, 1)
	for i := range 20 {
		lat[i] = []float64{5, 40, 8, 35, 6, 38, 7, 30, 9, 32}[i%10] * 1e6
	}
	j = JudgeWarmup(lat)
	f = goWording.WarmupFinding("GET /x", j)
	if j.Verdict != WarmupInconclusive || f == nil || f.Kind != FindWarmupInconclusive || !strings.Contains(f.Text, "which contains the 1.5× bar") ||
		!strings.Contains(f.Text, "whether the window includes warm-up is inconclusive") || !strings.Contains(f.Text, "as many requests would decide it") {
		t.Fatalf("noisy head: %+v %+v", j, f)
	}
	t.Log(f.Text)
	if f.Kind.String() != "warm-up-inconclusive" {
		t.Errorf("kind name %q", f.Kind)
	}
	j = JudgeWarmup(steady(12, 4))
	jvm := Wording{Input: "the recording", WarmupCauses: "class loading, JIT compilation", Restart: "start it after warm-up"}
	f = jvm.WarmupFinding("/pool", j)
	if j.Verdict != WarmupTooFew || f == nil || f.Kind != FindWarmupInconclusive || !strings.Contains(f.Text, "too few to judge warm-up, which needs at least 160 requests (a first tenth of at least 16") ||
		!strings.Contains(f.Text, "whether the recording includes warm-up (class loading, JIT compilation) is inconclusive; start it after warm-up") {
		t.Fatalf("12 requests: %+v %+v", j, f)
	}
	t.Log(f.Text)
	if j := JudgeWarmup(steady(159, 4)); j.Verdict != WarmupTooFew || j.Head != 15 {
		t.Errorf("159 requests, 4× at first: %+v, want too few", j)
	}
	for _, lat := range [][]float64{steady(12, 1), steady(159, 1), steady(400, 1), steady(5, 4), nil} {
		if j := JudgeWarmup(lat); j.Verdict != WarmupNone || goWording.WarmupFinding("g", j) != nil {
			t.Errorf("%d requests, no warm-up: %+v", len(lat), j)
		}
	}
}

// TestWarmupMinimum: the reason for MinWarmupRequests (docs/method.md §6).
// Without warm-up, an interval of the first tenth's mean on fewer than 4
// batches contains the 1.5× bar in about half the windows or more (49–80
// % of these seeded ones); the share is logged on each side of the minimum.
func TestWarmupMinimum(t *testing.T) {
	const reps = 1000
	for _, n := range []int{20, 50, 89, 90, 159, 160, 250, 400} {
		for _, rho := range []float64{0, 0.5} {
			var inc int
			for i := range reps {
				r := rand.New(rand.NewPCG(39, uint64(i)))
				lat := warmupSeries(r, n, 1, rho)
				j := JudgeWarmup(lat)
				// judged on the interval whatever the minimum
				q := j.Ratio
				if lo, hi := q.Interval(); lo <= WarmupRatio && WarmupRatio < hi {
					inc++
				}
			}
			share := float64(inc) / reps
			t.Logf("%3d requests, AR(1) %.1f, no warm-up: the interval contains the bar in %.0f %%", n, rho, 100*share)
			if n < MinWarmupRequests && share < 0.45 {
				t.Errorf("%d requests: %.0f %%, want at least 45 %% below the minimum", n, 100*share)
			}
		}
	}
}

// TestWarmupMoreRequests: "about f× as many requests would decide it".
// For 200 seeded inconclusive windows of independent requests (the first
// tenth 1.7× the rest), the same requests repeated (each part's copies
// shuffled among themselves, so that the ratio and the spread stay put)
// fire with 2f copies in most windows and with f/2 in few: f is where the
// interval's near edge reaches the bar.
func TestWarmupMoreRequests(t *testing.T) {
	times := func(lat []float64, head, k int, seed uint64) []float64 {
		var h, rest []float64
		for range k {
			h = append(h, lat[:head]...)
			rest = append(rest, lat[head:]...)
		}
		// copies in a row would be periodic, and batch means over whole
		// periods would see no spread
		r := rand.New(rand.NewPCG(41, seed))
		r.Shuffle(len(h), func(i, j int) { h[i], h[j] = h[j], h[i] })
		r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		return append(h, rest...)
	}
	var windows, twice, half int
	for i := uint64(0); windows < 200 && i < 5000; i++ {
		lat := warmupSeries(rand.New(rand.NewPCG(40, i)), 200, 1.7, 0)
		j := JudgeWarmup(lat)
		f := j.moreRequests()
		if j.Verdict != WarmupInconclusive || j.Ratio.Value <= WarmupRatio || f < 2 || f > 50 {
			continue
		}
		windows++
		if JudgeWarmup(times(lat, j.Head, int(math.Ceil(2*f)), i)).Verdict == WarmupFires {
			twice++
		}
		if JudgeWarmup(times(lat, j.Head, int(f/2), i)).Verdict == WarmupFires {
			half++
		}
	}
	t.Logf("%d inconclusive windows: fire with 2f× the requests in %d, with f/2× in %d", windows, twice, half)
	if windows < 100 || float64(twice) < 0.8*float64(windows) || float64(half) > 0.2*float64(windows) {
		t.Errorf("%d windows: 2f fires in %d, f/2 in %d; want ≥ 80 %% and ≤ 20 %%", windows, twice, half)
	}
}
