package jfr

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ParseDuration parses an ISO-8601 duration as java.time.Duration prints it
// and `jfr print --json` writes it: "PT0.17439958S", "PT1M2.5S", "PT2H",
// "PT-0.5S", "P1DT2H". A leading sign and a sign on each component are
// allowed; only seconds may have a fraction (at most 9 digits, '.' or ',').
// Years, months and weeks are not durations of fixed length and are refused.
func ParseDuration(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", s, err)
	}
	return d, nil
}

var errOverflow = errors.New("out of range")

func parseDuration(s string) (time.Duration, error) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if len(s) == 0 || (s[0] != 'P' && s[0] != 'p') {
		return 0, errors.New("want a leading P")
	}
	s = s[1:]
	var total int64
	inTime, any, last := false, false, int64(math.MaxInt64)
	for len(s) > 0 {
		if s[0] == 'T' || s[0] == 't' {
			if inTime {
				return 0, errors.New("second T")
			}
			inTime, s = true, s[1:]
			if len(s) == 0 {
				return 0, errors.New("nothing after T")
			}
			continue
		}
		c, rest, err := component(s)
		if err != nil {
			return 0, err
		}
		unit, ok := unitOf(c.unit, inTime)
		if !ok {
			return 0, fmt.Errorf("unit %q is not a fixed-length duration here", c.unit)
		}
		if unit >= last {
			return 0, errors.New("components out of order (want D, then T, H, M, S) or repeated")
		}
		last = unit
		v, err := c.nanos(unit)
		if err != nil {
			return 0, err
		}
		if total, err = add(total, v); err != nil {
			return 0, err
		}
		any, s = true, rest
	}
	if !any {
		return 0, errors.New("no components")
	}
	if neg {
		if total == math.MinInt64 {
			return 0, errOverflow
		}
		total = -total
	}
	return time.Duration(total), nil
}

// part is one signed component such as "-2.5S".
type part struct {
	neg   bool
	whole int64
	frac  int64 // nanoseconds of a fractional second
	unit  byte
}

func component(s string) (part, string, error) {
	var p part
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		p.neg = s[i] == '-'
		i++
	}
	start := i
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if p.whole > (math.MaxInt64-9)/10 {
			return p, "", errOverflow
		}
		p.whole = p.whole*10 + int64(s[i]-'0')
	}
	if i == start {
		return p, "", fmt.Errorf("want digits at %q", s)
	}
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		i++
		fstart, scale := i, int64(1e8)
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if i-fstart == 9 {
				return p, "", errors.New("more than 9 fraction digits")
			}
			p.frac += int64(s[i]-'0') * scale
			scale /= 10
		}
		if i == fstart {
			return p, "", errors.New("no digits after the decimal point")
		}
		if i >= len(s) || (s[i] != 'S' && s[i] != 's') {
			return p, "", errors.New("only seconds may have a fraction")
		}
	}
	if i >= len(s) {
		return p, "", errors.New("number without a unit")
	}
	p.unit = s[i] &^ 0x20 // upper case
	return p, s[i+1:], nil
}

// nanos returns the component in nanoseconds.
func (p part) nanos(unit int64) (int64, error) {
	if p.whole > math.MaxInt64/unit {
		return 0, errOverflow
	}
	v, err := add(p.whole*unit, p.frac)
	if err != nil {
		return 0, err
	}
	if p.neg {
		v = -v
	}
	return v, nil
}

func unitOf(u byte, inTime bool) (int64, bool) {
	switch {
	case !inTime && u == 'D':
		return int64(24 * time.Hour), true
	case inTime && u == 'H':
		return int64(time.Hour), true
	case inTime && u == 'M':
		return int64(time.Minute), true
	case inTime && u == 'S':
		return int64(time.Second), true
	}
	return 0, false
}

func add(a, b int64) (int64, error) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, errOverflow
	}
	return s, nil
}
