package triagereport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/triage"
)

// The writers' formatting. Where package triage formats the same numbers
// in its own sentences (the verdict, the reasons, the warnings), it keeps
// a copy of the helper that prints the same (internal/triage/words.go,
// verdict.go, rules.go, gc.go), so a number reads alike in both.

// maxListed is how many bad steps the text lists one by one.
const maxListed = 12

// maxNamed is how many instances the text names in one bad step.
const maxNamed = 10

// maxOutbound is how many routes with outbound calls the text lists one
// by one.
const maxOutbound = 3

// names joins the first maxNamed names and counts the rest.
func names(s []string) string {
	if len(s) <= maxNamed {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s, … %d more", strings.Join(s[:maxNamed], ", "), len(s)-maxNamed)
}

// who names the job and route.
func who(r *triage.Report) string {
	s := "all jobs"
	if r.Job != "" {
		s = "job=" + strconv.Quote(r.Job)
	}
	if r.Route != "" {
		s += " route=" + strconv.Quote(r.Route)
	}
	return s
}

// clockLayout is the time-of-day layout of the report: with seconds when
// the step is not whole minutes.
func clockLayout(r *triage.Report) string {
	if r.Step%time.Minute == 0 {
		return "15:04"
	}
	return "15:04:05"
}

// spanLayout is the layout of the period test's span: the date when it
// spans days.
func spanLayout(w triage.WhenEvidence) string {
	if w.SpanFrom.UTC().YearDay() != w.SpanTo.UTC().YearDay() {
		return "2006-01-02 15:04:05"
	}
	return "15:04:05"
}

// stallText is the shortest stall of a held step (Report.MinStall) as a
// duration, to the millisecond.
func stallText(r *triage.Report) string {
	return dur(time.Duration(r.MinStall * float64(time.Second)).Round(time.Millisecond))
}

// dur formats d without zero trailing units ("1h", "1m30s", "50ms").
func dur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// maxPlainSeconds is the largest magnitude ms and sec print as a duration
// or a plain decimal (about 31 years); beyond it, and for a value a
// time.Duration cannot hold, they print an exponent.
const maxPlainSeconds = 1e9

// ms formats seconds as a duration rounded to 0.1 ms, "-" for NaN or an
// infinity.
func ms(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "-"
	case math.Abs(s) >= maxPlainSeconds:
		return strconv.FormatFloat(s, 'g', 3, 64) + "s"
	}
	return time.Duration(s * float64(time.Second)).Round(100 * time.Microsecond).String()
}

// sec formats seconds with two decimals, "-" for NaN or an infinity.
func sec(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "-"
	case math.Abs(s) >= maxPlainSeconds:
		return strconv.FormatFloat(s, 'g', 3, 64)
	}
	return strconv.FormatFloat(s, 'f', 2, 64)
}

// pct formats a share as a whole percentage, "-" for NaN.
func pct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}

// pText formats a p-value with two significant digits ("-" for none).
func pText(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// pName names a quantile: 0.95 is "p95".
func pName(q float64) string { return "p" + strconv.FormatFloat(100*q, 'g', -1, 64) }

// phaseText names a phase on the clock: ":MM" for hourly periods, else
// the first occurrence's time.
func phaseText(t time.Time, p time.Duration) string {
	t = t.UTC()
	switch {
	case p%time.Hour == 0 && p < 24*time.Hour:
		return fmt.Sprintf("at :%02d", t.Minute())
	case p%(24*time.Hour) == 0:
		return "at " + t.Format("15:04") + " UTC"
	}
	return "from " + t.Format("15:04:05") + " UTC"
}

// indexSet is the set of the step indexes in idx.
func indexSet(idx []int) map[int]bool {
	m := make(map[int]bool, len(idx))
	for _, i := range idx {
		m[i] = true
	}
	return m
}
