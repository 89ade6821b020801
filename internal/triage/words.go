package triage

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The formatting of the analysis's own sentences (the verdict, the
// reasons, the warnings), exported so that the report writers
// (internal/report/triagereport) print numbers, names and times in the
// same words: one copy of each.

// maxNamed is how many instances a sentence names before it counts the
// rest.
const maxNamed = 10

// Names joins the first maxNamed names and counts the rest.
func Names(s []string) string {
	if len(s) <= maxNamed {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s, … %d more", strings.Join(s[:maxNamed], ", "), len(s)-maxNamed)
}

// ClockLayout is the time-of-day layout of the report: with seconds when
// the step is not whole minutes.
func (r *Report) ClockLayout() string {
	if r.Step%time.Minute == 0 {
		return "15:04"
	}
	return "15:04:05"
}

// maxPlainSeconds is the largest magnitude ms and sec print as a duration
// or a plain decimal (about 31 years); beyond it, and for a value a
// time.Duration cannot hold, they print an exponent.
const maxPlainSeconds = 1e9

// Ms formats seconds as a duration rounded to 0.1 ms, "-" for NaN or an
// infinity.
func Ms(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "-"
	case math.Abs(s) >= maxPlainSeconds:
		return strconv.FormatFloat(s, 'g', 3, 64) + "s"
	}
	return time.Duration(s * float64(time.Second)).Round(100 * time.Microsecond).String()
}

// Sec formats seconds with two decimals, "-" for NaN or an infinity.
func Sec(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "-"
	case math.Abs(s) >= maxPlainSeconds:
		return strconv.FormatFloat(s, 'g', 3, 64)
	}
	return strconv.FormatFloat(s, 'f', 2, 64)
}
