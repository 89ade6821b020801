package lab

import "github.com/latscope/latscope/internal/units"

// Pct is x as a per cent of of, rounded to 3 decimals; 0 when of is 0.
func Pct(x, of float64) float64 {
	if of == 0 {
		return 0
	}
	return units.Round3(100 * x / of)
}

// ErrPct is a prediction's error against the measurement, (pred − meas) /
// meas in per cent, rounded to 3 decimals; 0 when meas is 0.
func ErrPct(pred, meas float64) float64 {
	if meas == 0 {
		return 0
	}
	return units.Round3(100 * (pred - meas) / meas)
}

// Gain is how much after is below before, in per cent of before, rounded
// to 3 decimals; 0 when before is 0.
func Gain(before, after float64) float64 {
	if before == 0 {
		return 0
	}
	return units.Round3(100 * (before - after) / before)
}
