package hostsig

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// PSILine is one line of a pressure file. Avg10/60/300 are the percentages of wall time
// stalled over the last 10, 60 and 300 s (gauges); Total is the cumulative stall (counter).
type PSILine struct {
	Avg10, Avg60, Avg300 float64
	Total                time.Duration
}

// PSI is a pressure file (/proc/pressure/cpu or a v2 cgroup's cpu.pressure). Some is time in
// which at least one task was runnable but not running; Full is time in which all non-idle
// tasks were (for the system-wide CPU file the kernel reports Full as zero).
type PSI struct {
	Some    PSILine
	Full    PSILine
	HasFull bool // kernels before 5.13 print no "full" line for CPU
}

// ParsePSI parses a pressure file: lines "some|full avg10=F avg60=F avg300=F total=N" with
// the total in microseconds. A "some" line is required.
func ParsePSI(b []byte) (PSI, error) {
	var p PSI
	hasSome := false
	for i, line := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		kind, rest, _ := bytes.Cut(line, []byte(" "))
		l, err := parsePSILine(rest)
		if err != nil {
			return PSI{}, fmt.Errorf("parse pressure: line %d: %w", i+1, err)
		}
		switch {
		case string(kind) == "some" && !hasSome:
			p.Some, hasSome = l, true
		case string(kind) == "full" && !p.HasFull:
			p.Full, p.HasFull = l, true
		default:
			return PSI{}, fmt.Errorf("parse pressure: line %d: unexpected %q", i+1, clip(kind))
		}
	}
	if !hasSome {
		return PSI{}, fmt.Errorf("parse pressure: no some line")
	}
	return p, nil
}

func parsePSILine(b []byte) (PSILine, error) {
	var l PSILine
	seen := 0 // bit per key, in the order of the switch
	for _, kv := range bytes.Fields(b) {
		k, v, ok := bytes.Cut(kv, []byte("="))
		if !ok {
			return PSILine{}, fmt.Errorf("field %q is not key=value", clip(kv))
		}
		var err error
		bit := 0
		switch string(k) {
		case "avg10":
			l.Avg10, err = parsePercent(v)
			bit = 1
		case "avg60":
			l.Avg60, err = parsePercent(v)
			bit = 2
		case "avg300":
			l.Avg300, err = parsePercent(v)
			bit = 4
		case "total":
			var n uint64
			n, err = strconv.ParseUint(string(v), 10, 64)
			l.Total, bit = scaled(n, time.Microsecond), 8
		default:
			continue // newer kernels may add fields
		}
		if err != nil {
			return PSILine{}, fmt.Errorf("%s: %w", k, err)
		}
		if seen&bit != 0 {
			return PSILine{}, fmt.Errorf("%s given twice", k)
		}
		seen |= bit
	}
	if seen != 15 {
		return PSILine{}, fmt.Errorf("want avg10, avg60, avg300 and total, have %q", clip(b))
	}
	return l, nil
}

func parsePercent(v []byte) (float64, error) {
	f, err := strconv.ParseFloat(string(v), 64)
	if err == nil && !(f >= 0 && f <= 100) {
		err = fmt.Errorf("%q is not a percentage", v)
	}
	return f, err
}
