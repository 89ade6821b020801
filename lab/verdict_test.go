package lab

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/stats"
)

func TestBandJudge(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		band   Band
		lo, hi float64
		want   string
	}{
		{Between(90, 102), 95, 99, Pass},
		{Between(90, 102), 90, 102, Pass}, // the edges belong to the band
		{Between(90, 102), 101, 104, Inconclusive},
		{Between(90, 102), 88, 91, Inconclusive},
		{Between(90, 102), 85, 105, Inconclusive}, // wider than the band
		{Between(90, 102), 102.1, 104, Fail},
		{Between(90, 102), 80, 89.9, Fail},
		{Over(120), 180, 200, Pass},
		{Over(120), 110, 125, Inconclusive},
		{Over(120), 100, 119, Fail},
		{Under(3), -2, 2.9, Pass},
		{Under(3), 1, 4, Inconclusive},
		{Under(3), 3.1, 5, Fail},
		{Within(5), -4.9, 4.9, Pass},
		{Within(5), -6.1, -2.3, Inconclusive},
		{Within(5), -8.1, -6.1, Fail},
		{Within(5), 5.2, 9, Fail},
		{Within(5), nan, nan, Inconclusive}, // no interval: too few values
	}
	for _, c := range cases {
		if got := c.band.Judge(c.lo, c.hi); got != c.want {
			t.Errorf("%s: [%v, %v] judged %s, want %s", c.band, c.lo, c.hi, got, c.want)
		}
	}
	for b, want := range map[Band]string{Between(90, 102): "90–102", Over(120): "> 120", Under(3): "under 3", Within(5): "within ±5"} {
		if b.String() != want {
			t.Errorf("Band%v = %q, want %q", b, b.String(), want)
		}
	}
}

// TestEstimatedKnown: an error of −3.0 % with an SE of 0.9 on 30 degrees of
// freedom has the interval −3 ± 1.838 (t 0.975, 30 = 2.042): inside ±5, a pass; the
// same error with an SE of 1.5 crosses −5: inconclusive; −8 ± 2.042 lies
// wholly below −5: a fail, the only verdict with OK false.
func TestEstimatedKnown(t *testing.T) {
	const t30 = 2.0423 // t(0.975, 30), tables
	for _, c := range []struct {
		value, se float64
		want      string
	}{{-3, 0.9, Pass}, {-3, 1.5, Inconclusive}, {-8, 1, Fail}} {
		ck := Estimated("overlap error (%)", "", Within(5), stats.Estimate{Value: c.value, SE: c.se, DF: 30}, "delta method")
		if ck.Verdict != c.want || ck.OK != (c.want != Fail) || ck.Status() != c.want {
			t.Errorf("%v ± %v: verdict %s ok %v, want %s", c.value, c.se, ck.Verdict, ck.OK, c.want)
		}
		if ck.Low == nil || math.Abs(*ck.Low-(c.value-t30*c.se)) > 0.002 || math.Abs(*ck.High-(c.value+t30*c.se)) > 0.002 {
			t.Errorf("%v ± %v: interval %v–%v, want ± %v", c.value, c.se, ck.Low, ck.High, t30*c.se)
		}
		if ck.Want != "within ±5" || ck.Got != fmt.Sprintf("%.1f", c.value) {
			t.Errorf("want %q got %q", ck.Want, ck.Got)
		}
	}
	// no SE (fewer than 4 requests): inconclusive, not failed, no interval
	ck := Estimated("x", "", Within(5), stats.Estimate{Value: -20, SE: math.NaN(), DF: math.NaN()}, "batch means")
	if ck.Verdict != Inconclusive || !ck.OK || ck.Low != nil || ck.Interval() != "—" {
		t.Errorf("no SE: %+v", ck)
	}
	// an exact value judged as an estimate (SE 0): its point decides
	ck = Estimated("critical path / mean (%)", "", Between(98, 102), stats.Estimate{Value: 100, SE: 0, DF: math.Inf(1)}, "ratio")
	if ck.Verdict != Pass || ck.Interval() != "100.0–100.0" {
		t.Errorf("exact estimate: %+v, interval %s", ck, ck.Interval())
	}
	if ex := Exact("#1", "shared vs upstream", "cpu vs upstream", false); ex.Verdict != Fail || ex.OK || ex.Interval() != "exact" {
		t.Errorf("Exact: %+v", ex)
	}
	if old := (Check{OK: true}); old.Status() != Pass || (Check{}).Status() != Fail {
		t.Error("Status of a check without a verdict")
	}
	if Combine(Pass, Inconclusive) != Inconclusive || Combine(Inconclusive, Fail) != Fail || Combine(Pass, Pass) != Pass {
		t.Error("Combine")
	}
}

// TestAlphaAtTheEdge: with the truth exactly on the band's upper edge, a
// mean of 400 independent values fails (its interval wholly above the
// edge) in about 2.5 % of seeded runs, and passes almost never; with the
// truth well inside, it never fails. Deterministic: fixed seeds.
func TestAlphaAtTheEdge(t *testing.T) {
	const reps, n = 4000, 400
	count := func(mu float64) map[string]int {
		out := map[string]int{}
		for i := range reps {
			r := rand.New(rand.NewPCG(25, uint64(i)))
			xs := make([]float64, n)
			for j := range xs {
				xs[j] = mu + 5*r.NormFloat64()
			}
			out[Estimated("x", "", Between(90, 102), stats.BatchMeans(xs).Estimate(), "").Verdict]++
		}
		return out
	}
	edge := count(102)
	fails := float64(edge[Fail]) / reps
	t.Logf("truth on the edge: %v (false fails %.2f %%)", edge, 100*fails)
	if fails < 0.015 || fails > 0.035 {
		t.Errorf("false fails at the edge %.2f %%, want about %.1f %%", 100*fails, 100*Alpha)
	}
	inside := count(97)
	t.Logf("truth inside: %v", inside)
	if inside[Fail] > 0 || inside[Pass] < reps*99/100 {
		t.Errorf("truth well inside: %v, want no fail and passes", inside)
	}
}

func TestSummaryAndReport(t *testing.T) {
	lo, hi := -6.1, -2.3
	o := &Outcome{Title: "T", Checks: []Check{
		Exact("#1", "shared vs upstream", "shared vs upstream", true),
		{Name: "overlap error (%)", Want: "within ±5", Got: "-4.2", OK: true, Verdict: Inconclusive, Low: &lo, High: &hi, Method: "delta method"},
		Estimated("coverage (%)", "", Between(95, 103), stats.Estimate{Value: 99, SE: 0.5, DF: 20}, "ratio of means"),
	}}
	if s := Summary(o.Checks); s != "2 passed, 1 inconclusive" {
		t.Errorf("Summary = %q", s)
	}
	if len(o.Failed()) != 0 || len(o.Inconclusive()) != 1 {
		t.Errorf("failed %v, inconclusive %v", o.Failed(), o.Inconclusive())
	}
	md := o.Report("seed", "/tmp/x", time.Second, time.Unix(0, 0), 0)
	for _, want := range []string{"## Checks (2 of 3 passed, 1 inconclusive)", "| overlap error (%) | within ±5 | -4.2 | -6.1 to -2.3 | *inconclusive* |",
		"| #1 | shared vs upstream | shared vs upstream | exact | pass |", "Inconclusive (the samples allow both): overlap error (%): -4.2, 95 % interval -6.1 to -2.3 against within ±5.",
		"at most 2.5 %", "How the intervals were computed:\n\n- delta method\n- ratio of means\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// a scenario whose checks carry no verdict keeps the old table
	old := &Outcome{Checks: []Check{{Name: "a", Want: "w", Got: "g", OK: true}, {Name: "b", Want: "w", Got: "g"}}}
	md = old.Report("fleet", "/tmp/x", time.Second, time.Unix(0, 0), 0)
	if !strings.Contains(md, "## Checks (1 of 2 passed)\n\n| check | want | got | |\n") || !strings.Contains(md, "| b | w | g | **FAIL** |") {
		t.Errorf("old-style report changed:\n%s", md)
	}
	if tb := ChecksTable(old.Checks); len(tb.Columns) != 4 {
		t.Errorf("old-style HTML table has %d columns", len(tb.Columns))
	}
	tb := ChecksTable(o.Checks)
	if len(tb.Columns) != 5 || tb.Rows[1][3].Text != "-6.1 to -2.3" || tb.Rows[1][4].Text != "inconclusive" {
		t.Errorf("HTML table: %+v", tb.Rows)
	}
	// JSON: the old fields keep their names; the new ones are added
	b, _ := json.Marshal(o.Checks[1])
	for _, want := range []string{`"OK":true`, `"Verdict":"inconclusive"`, `"Low":-6.1`, `"High":-2.3`, `"Method":"delta method"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	b, _ = json.Marshal(old.Checks[0])
	if string(b) != `{"Name":"a","Want":"w","Got":"g","OK":true}` {
		t.Errorf("a check without a verdict in JSON: %s", b)
	}
}
