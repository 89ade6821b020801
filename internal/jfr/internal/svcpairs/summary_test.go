package main

import (
	"math"
	"testing"
)

// TestSignedRank: the exact test against values worked out by hand and
// known from tables. With all of n differences of one sign, W+ is n(n+1)/2
// and p = 2 / 2^n; with ranks 1..5 and W+ = 6 (1+5), 26 of the 32
// assignments lie at least 1.5 from the mean 7.5 (W+ ≤ 6: 13, W+ ≥ 9:
// 13), p = 0.8125.
func TestSignedRank(t *testing.T) {
	for _, c := range []struct {
		d    []float64
		w, p float64
	}{
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5}, 15, 2.0 / 32},
		{[]float64{-0.1, -0.2, -0.3, -0.4, -0.5, -0.6}, 0, 2.0 / 64},
		{[]float64{0.01, -0.02, -0.03, -0.04, 0.05}, 6, 0.8125},
		{[]float64{0, 0}, 0, 1},
	} {
		w, p := signedRank(c.d)
		if w != c.w || math.Abs(p-c.p) > 1e-12 {
			t.Errorf("signedRank(%v) = %g, %g; want %g, %g", c.d, w, p, c.w, c.p)
		}
	}
}

// TestKeptSummary: the repetitions of 5–6 December 2026 (testdata, written
// by svcpairs as it ran them) give the summary docs/jfr.md quotes.
func TestKeptSummary(t *testing.T) {
	rs, err := readRepeats([]string{"testdata/2026-12-05-quiet.jsonl", "testdata/2026-12-05-burners.jsonl", "testdata/2026-12-06-quiet.jsonl", "testdata/2026-12-06-burners.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	got := summary(rs)
	want := "within 10 % of the first 40-client measurement: the prediction 15 of 20, the measurement again 11 of 20; mean absolute error 7.7 % against 8.9 %; Wilcoxon signed-rank of the two, paired (exact, two-sided): W+ = 59, p = 0.090"
	if got != want {
		t.Errorf("summary\n got %s\nwant %s", got, want)
	}
}
