package lab

import (
	"fmt"
	"math"
	"strings"

	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/internal/units"
)

// Verdicts of a check. A check of an estimate is a statistical test of
// "the quantity lies in the band" at a stated α: its 95 % interval
// (two-sided) is judged against the band.
const (
	// Pass: the interval lies inside the band.
	Pass = "pass"
	// Fail: the interval lies wholly outside the band. When the truth
	// sits exactly on the band's edge, a 95 % interval lies wholly beyond
	// it by chance at most 2.5 % of the time (one tail): Alpha.
	Fail = "fail"
	// Inconclusive: the interval crosses an edge; the samples allow both.
	Inconclusive = "inconclusive"
)

// Alpha is the chance that a check fails although the quantity it judges
// is in its band: at most 2.5 %, reached when the truth sits exactly on an
// edge (the upper tail of a two-sided 95 % interval); less the further
// inside it lies. It holds for each check alone; a run's k estimated
// checks fail falsely together with at most 1 − (1 − Alpha)^k when all
// sit on their edges, and with far less when they sit inside as usual.
const Alpha = (1 - stats.Confidence) / 2

// Band is an acceptance band [Lo, Hi]; −Inf or +Inf for a one-sided one.
type Band struct{ Lo, Hi float64 }

// Between is the band lo–hi.
func Between(lo, hi float64) Band { return Band{lo, hi} }

// Over is the band above x.
func Over(x float64) Band { return Band{x, math.Inf(1)} }

// Under is the band below x.
func Under(x float64) Band { return Band{math.Inf(-1), x} }

// Within is the band ±x.
func Within(x float64) Band { return Band{-x, x} }

// String is "90–102", "> 120", "under 3" or "within ±5".
func (b Band) String() string {
	switch {
	case math.IsInf(b.Lo, -1):
		return fmt.Sprintf("under %g", b.Hi)
	case math.IsInf(b.Hi, 1):
		return fmt.Sprintf("> %g", b.Lo)
	case b.Lo == -b.Hi:
		return fmt.Sprintf("within ±%g", b.Hi)
	}
	return fmt.Sprintf("%g–%g", b.Lo, b.Hi)
}

// Judge returns the verdict of the interval [lo, hi] against the band:
// pass inside it, fail wholly outside it, inconclusive across an edge or
// without an interval (NaN).
func (b Band) Judge(lo, hi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return Inconclusive
	case lo >= b.Lo && hi <= b.Hi:
		return Pass
	case hi < b.Lo || lo > b.Hi:
		return Fail
	}
	return Inconclusive
}

// Exact is a structural check, judged without an interval: which frame is
// first, a count, an invariant of the analysis.
func Exact(name, want, got string, ok bool) Check {
	v := Pass
	if !ok {
		v = Fail
	}
	return Check{Name: name, Want: want, Got: got, OK: ok, Verdict: v}
}

// Estimated is the check of an estimate against a band: its 95 %
// interval e.Interval() judged by Band.Judge. want "" is the band's own
// words; method says how the estimate's standard error was computed.
// Got is the estimate to one decimal.
func Estimated(name, want string, band Band, e stats.Estimate, method string) Check {
	lo, hi := e.Interval()
	return Judged(name, want, band, e.Value, lo, hi, method)
}

// Judged is the check of value with the interval [lo, hi] (NaN: none)
// against band. Estimated gives it a 95 % interval; a check whose
// interval is a bound (an instrument's resolution) says so in method.
func Judged(name, want string, band Band, value, lo, hi float64, method string) Check {
	if want == "" {
		want = band.String()
	}
	c := Check{Name: name, Want: want, Got: fmt.Sprintf("%.1f", value), Method: method, Verdict: band.Judge(lo, hi)}
	if !math.IsNaN(lo) && !math.IsNaN(hi) {
		l, h := units.Round3(lo), units.Round3(hi)
		c.Low, c.High = &l, &h
	}
	c.OK = c.Verdict != Fail
	return c
}

// Combine is the verdict of a check made of several: fail when one
// fails, pass when all pass, else inconclusive.
func Combine(verdicts ...string) string {
	out := Pass
	for _, v := range verdicts {
		switch v {
		case Fail:
			return Fail
		case Inconclusive:
			out = Inconclusive
		}
	}
	return out
}

// Status is the check's verdict: Verdict, or pass / fail from OK for a
// check that does not set it.
func (c Check) Status() string {
	switch {
	case c.Verdict != "":
		return c.Verdict
	case c.OK:
		return Pass
	}
	return Fail
}

// Interval is the check's 95 % interval as "lo–hi" ("lo to hi" when lo
// is negative), "exact" for a check without one by design, "—" for an
// estimate with too few values for one.
func (c Check) Interval() string {
	switch {
	case c.Low != nil && c.High != nil:
		return RangeWords(*c.Low, *c.High)
	case c.Method == "":
		return "exact"
	}
	return "—"
}

// RangeWords is "lo–hi" to one decimal, or "lo to hi" when lo is
// negative (so that "-6.1 to -2.3" does not read as a subtraction).
func RangeWords(lo, hi float64) string {
	if lo < 0 {
		return fmt.Sprintf("%.1f to %.1f", lo, hi)
	}
	return fmt.Sprintf("%.1f–%.1f", lo, hi)
}

// Range is a 95 % interval in a scenario's JSON.
type Range struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// RangeOf returns e's 95 % interval, rounded to 3 decimals; nil when e has
// no standard error.
func RangeOf(e stats.Estimate) *Range {
	if !e.OK() {
		return nil
	}
	lo, hi := e.Interval()
	return &Range{units.Round3(lo), units.Round3(hi)}
}

// judged reports whether any check carries a three-way verdict: the
// reports then show the intervals and verdicts (a scenario whose checks
// are all plain pass / FAIL keeps its tables as they were).
func judged(checks []Check) bool {
	for _, c := range checks {
		if c.Verdict != "" {
			return true
		}
	}
	return false
}

// Inconclusive returns the checks whose interval crosses their band.
func (o *Outcome) Inconclusive() []Check {
	var out []Check
	for _, c := range o.Checks {
		if c.Status() == Inconclusive {
			out = append(out, c)
		}
	}
	return out
}

// Summary is "9 passed, 1 inconclusive" (and ", N failed" when some did).
func Summary(checks []Check) string {
	n := map[string]int{}
	for _, c := range checks {
		n[c.Status()]++
	}
	s := fmt.Sprintf("%d passed", n[Pass])
	if n[Inconclusive] > 0 {
		s += fmt.Sprintf(", %d inconclusive", n[Inconclusive])
	}
	if n[Fail] > 0 {
		s += fmt.Sprintf(", %d failed", n[Fail])
	}
	return s
}

// inconclusiveWords names the inconclusive checks with their intervals:
// "overlap … (error %): 95 % interval -6.1–-2.3 against within ±5".
func inconclusiveWords(checks []Check) string {
	var parts []string
	for _, c := range checks {
		if c.Status() == Inconclusive {
			parts = append(parts, fmt.Sprintf("%s: %s, 95 %% interval %s against %s", c.Name, c.Got, c.Interval(), c.Want))
		}
	}
	return strings.Join(parts, "; ")
}

// VerdictRule is the rule the reports state once above the checks.
const VerdictRule = "Each estimate is judged by its 95 % interval: **pass** when the interval lies inside the band, " +
	"**fail** only when it lies wholly outside (by chance at most 2.5 % of the time when the truth sits exactly on the band's edge), " +
	"**inconclusive** when it crosses an edge (the samples allow both). Structural checks are exact. " +
	"The lab exits with status 1 only when a check failed."
