package htmlreport

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// niceStep returns a step of 1, 2, 2.5 or 5 × 10^k near span/n.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// ticks returns tick values covering [lo, hi] about n apart.
func ticks(lo, hi float64, n int) []float64 {
	step := niceStep(hi-lo, n)
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		out = append(out, clean(v))
		if len(out) > 100 {
			break
		}
	}
	return out
}

// niceMax rounds x up to a tick so the axis ends on a label.
func niceMax(x float64, n int) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	step := niceStep(x, n)
	return math.Ceil(x/step-1e-9) * step
}

func clean(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// fmtMs formats milliseconds for a label: 157 ms, 51.4 ms, 4.06 ms, 0.47 ms, 12 µs.
func fmtMs(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case a == 0:
		return "0 ms"
	case a >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case a >= 10:
		return fmt.Sprintf("%.1f ms", v)
	case a >= 0.1:
		return fmt.Sprintf("%.2f ms", v)
	default:
		return fmt.Sprintf("%.0f µs", v*1000)
	}
}

// fmtNum formats a number without trailing zeros (axis ticks).
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// fmtPct formats a percentage: 64 %, 3.2 %, 0.41 %.
func fmtPct(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case a >= 10:
		return fmt.Sprintf("%.0f%%", v)
	case a >= 1:
		return fmt.Sprintf("%.1f%%", v)
	case a == 0:
		return "0%"
	default:
		return fmt.Sprintf("%.2f%%", v)
	}
}

// clip shortens s to at most n characters with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n || n < 2 {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// textWidth estimates the width in px of s at the charts' 12 px font.
func textWidth(s string, px float64) float64 {
	return float64(utf8.RuneCountInString(s)) * px * 0.56
}

// finite replaces NaN and infinities by 0 so bad input never breaks a chart.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
