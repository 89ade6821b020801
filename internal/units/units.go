// Package units converts times into the unit latscope prints them in:
// milliseconds, rounded to the microsecond, in every _ms field of its JSON
// and every table.
package units

import (
	"math"
	"time"
)

// Ms is d in milliseconds, rounded to the microsecond.
func Ms(d time.Duration) float64 { return MsOf(float64(d)) }

// MsOf is Ms of a time in nanoseconds held as a float (a mean, a sum
// divided by a count).
func MsOf(ns float64) float64 { return Round3(ns / 1e6) }

// Round3 keeps three decimals (microseconds for milliseconds); NaN and
// infinities, which no field may hold, become 0.
func Round3(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1000) / 1000
}
