package triage

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// steps returns the bad steps of runs starting at starts, each n long.
func steps(n int, starts ...int) []int {
	var idx []int
	for _, s := range starts {
		for d := range n {
			idx = append(idx, s+d)
		}
	}
	return idx
}

// every returns from, from+p, … below to.
func every(from, p, to int, skip ...int) []int {
	var out []int
	for s := from; s < to; s += p {
		skipped := false
		for _, k := range skip {
			skipped = skipped || k == s
		}
		if !skipped {
			out = append(out, s)
		}
	}
	return out
}

func TestFindPeriod(t *testing.T) {
	tests := []struct {
		name string
		idx  []int
		n    int
		want int // the period in steps, 0: none
	}{
		{"hourly, runs of 2", steps(2, every(0, 60, 360)...), 360, 60},
		{"hourly with a step of jitter", steps(1, 0, 61, 119, 180, 240), 300, 60},
		{"hourly, one missed", steps(1, 5, 65, 185, 245), 300, 60},
		{"two occurrences", steps(1, 0, 60), 360, 0},
		{"irregular", steps(1, 3, 17, 90, 101, 250), 360, 0},
		{"hourly plus an outlier", steps(1, 0, 60, 120, 180, 240, 300, 333), 360, 60},
		// A lock every 10 s at a 2 s step, one occurrence missed: the
		// 10 s period explains 11 runs, the 20 s one 6 of them (and fills
		// all its slots, which the old rule preferred).
		{"every 5 steps, not every 10", steps(1, every(2, 5, 60, 27)...), 64, 5},
		// 3 bursts every 4 steps: a continuous fault from the first to the
		// last puts its 3 runs as evenly 1 time in 5 (the lab's old
		// throttle phase: no honest test claims a period).
		{"3 bursts", steps(1, 1, 5, 9), 13, 0},
		{"6 bursts (the lab's)", steps(1, every(1, 4, 22)...), 22, 4},
		// A period of 2 steps whose runs and gaps are all one step: a
		// hovering fault that alternates is the same pattern; no period.
		{"alternate steps", steps(1, every(2, 2, 34, 10, 22)...), 36, 0},
		// A continuous fault whose signal hovered around the threshold
		// for 24 steps of 60, with three runs 10 steps apart; the old rule
		// said "every 10 steps" and planned the next occurrence after the
		// fault had ended (its slots after the span are empty).
		{"hovering, three runs", []int{20, 21, 22, 23, 24, 25, 26, 27, 30, 40, 41, 42, 43}, 60, 0},
		{"hovering, few slots after", []int{20, 21, 22, 23, 30, 31, 32, 40, 41, 42, 43}, 45, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := findPeriod(tt.idx, tt.n)
			if res.best.p != tt.want {
				t.Errorf("period %+v (rejected %+v, %s), want %d", res.best, res.rejected, res.reason, tt.want)
			}
			if res.best.p != 0 && !(res.best.pValue <= PeriodAlpha) {
				t.Errorf("p-value %v over α", res.best.pValue)
			}
		})
	}
}

// TestFindPeriodHovering: continuous faults whose bad steps are drawn
// independently (rate ½) or from a hovering AR(1) signal (φ 0.5 and 0.8:
// bad steps in clusters) over 30 steps of 70 get a period at most about α
// of the time. Seeded: the counts are fixed, and the bound is the
// binomial's 99.9th percentile at α.
func TestFindPeriodHovering(t *testing.T) {
	for _, phi := range []float64{0, 0.5, 0.8} {
		rng := rand.New(rand.NewPCG(7, uint64(phi*10)))
		claims, tried := 0, 0
		for k := 0; k < 400; k++ {
			var idx []int
			x := rng.NormFloat64()
			for i := 20; i < 50; i++ {
				x = phi*x + math.Sqrt(1-phi*phi)*rng.NormFloat64()
				if x > 0.3 {
					idx = append(idx, i)
				}
			}
			tried++
			if findPeriod(idx, 70).best.p != 0 {
				claims++
			}
		}
		t.Logf("AR(1) φ %.1f: %d of %d continuous faults got a period", phi, claims, tried)
		if claims > 12 { // P(Bin(400, 0.01) > 12) < 0.001
			t.Errorf("AR(1) φ %.1f: %d of %d continuous faults got a period, want about %.0f", phi, claims, tried, PeriodAlpha*float64(tried))
		}
	}
}

// TestFindPeriodLarge bounds the search and its test on a week of minutes:
// thousands of random runs (no candidate: no draw), and hourly runs (999
// draws over 3,360 periods).
func TestFindPeriodLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var idx []int
	for i := 0; i < 10080; i += 2 + rng.IntN(6) {
		idx = append(idx, i)
	}
	if got := findPeriod(idx, 10080); got.best.p != 0 {
		t.Errorf("random runs gave a period %+v", got.best)
	}
	if got := findPeriod(steps(2, every(30, 60, 10080)...), 10080); got.best.p != 60 || got.draws != PeriodDraws {
		t.Errorf("hourly runs over a week: %+v after %d draws", got.best, got.draws)
	}
}

func BenchmarkFindPeriodWeek(b *testing.B) {
	idx := steps(2, every(30, 60, 10080)...)
	for b.Loop() {
		findPeriod(idx, 10080)
	}
}

// TestCandidatePeriodsPrune: the vote that prunes the periods never drops
// a candidate that checking every period finds.
func TestCandidatePeriodsPrune(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for k := 0; k < 3000; k++ {
		n := 10 + rng.IntN(300)
		var starts []int
		p, jitter := 2+rng.IntN(n/3), rng.IntN(3)
		for s := rng.IntN(p); s < n; s += p {
			if rng.IntN(6) > 0 {
				starts = append(starts, min(n-1, max(0, s+rng.IntN(2*jitter+1)-jitter)))
			}
			if rng.IntN(5) == 0 {
				starts = append(starts, rng.IntN(n))
			}
		}
		slices.Sort(starts)
		starts = slices.Compact(starts)
		if len(starts) < 3 {
			continue
		}
		span := starts[len(starts)-1] - starts[0] + 1
		fast, slow := newPeriodSearch(n, span), newPeriodSearch(n, span)
		slow.noPruning = true
		a, b := fast.candidates(starts, math.Inf(1)), slow.candidates(starts, math.Inf(1))
		if !slices.EqualFunc(a, b, func(x, y period) bool { x.pValue, y.pValue = 0, 0; return x == y }) {
			t.Fatalf("starts %v in %d steps: pruned %+v, all %+v", starts, n, a, b)
		}
	}
}

// TestPeriodAlternates: bad in every other step — a lock every 10 s at a
// 5 s step — is the only placement of its runs, as for a fault that
// hovers and alternates: no period (the old rule said "every 20 s", its
// tolerance of a step holding both phases mod 4), and the reason says a
// shorter step can tell.
func TestPeriodAlternates(t *testing.T) {
	idx := steps(1, every(2, 2, 34)...)
	in := Input{Start: t0, Step: 5 * time.Second, Steps: 36}
	w := when(in, idx)
	if w.Period != 0 || w.Candidate != 10*time.Second || !strings.Contains(w.Reason, "a step of at most half of 5s can tell them apart") {
		t.Errorf("when %+v", w)
	}
}
