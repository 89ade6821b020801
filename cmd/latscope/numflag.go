package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
)

// Numeric flags are validated here, in one place, as they are parsed: a
// value that is not a number, is NaN or ±Inf, or lies outside the flag's
// range is refused by flag.FlagSet.Parse with an error naming the flag
// ("invalid value "NaN" for flag -clients: want a finite number from 0 to
// 100000"). Every command declares its numeric flags with floatVar and
// intVar (or the finiteFloat and boundedInt types with fs.Var).

// finiteFloat is a float64 flag that refuses NaN, ±Inf and values outside
// [Min, Max] (or (Min, Max] when OpenMin is set). Its zero Min and Max
// allow only 0: always set them.
type finiteFloat struct {
	P        *float64
	Min, Max float64
	OpenMin  bool // Min itself is refused ("positive")
}

// String returns the current value.
func (f *finiteFloat) String() string {
	if f == nil || f.P == nil {
		return ""
	}
	return strconv.FormatFloat(*f.P, 'g', -1, 64)
}

// Set parses and checks v.
func (f *finiteFloat) Set(v string) error {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("want a number (%s)", f.rangeText())
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || x < f.Min || x > f.Max || (f.OpenMin && x == f.Min) {
		return fmt.Errorf("want a finite number %s", f.rangeText())
	}
	*f.P = x
	return nil
}

func (f *finiteFloat) rangeText() string {
	if f.OpenMin {
		return fmt.Sprintf("above %g, at most %g", f.Min, f.Max)
	}
	return fmt.Sprintf("from %g to %g", f.Min, f.Max)
}

// boundedInt is an int flag that refuses values outside [Min, Max].
type boundedInt struct {
	P        *int
	Min, Max int
}

// String returns the current value.
func (f *boundedInt) String() string {
	if f == nil || f.P == nil {
		return ""
	}
	return strconv.Itoa(*f.P)
}

// Set parses and checks v.
func (f *boundedInt) Set(v string) error {
	x, err := strconv.ParseInt(v, 0, 64)
	if err != nil || x < int64(f.Min) || x > int64(f.Max) {
		return fmt.Errorf("want a whole number from %d to %d", f.Min, f.Max)
	}
	*f.P = int(x)
	return nil
}

// floatVar defines a finiteFloat flag with default value (which may lie
// outside the range, as a "not given" marker such as -1).
func floatVar(fs *flag.FlagSet, p *float64, name string, value, lo, hi float64, usage string) {
	*p = value
	fs.Var(&finiteFloat{P: p, Min: lo, Max: hi}, name, usage)
}

// positiveFloatVar defines a finiteFloat flag that refuses 0 too.
func positiveFloatVar(fs *flag.FlagSet, p *float64, name string, value, hi float64, usage string) {
	*p = value
	fs.Var(&finiteFloat{P: p, Min: 0, Max: hi, OpenMin: true}, name, usage)
}

// intVar defines a boundedInt flag with default value.
func intVar(fs *flag.FlagSet, p *int, name string, value, lo, hi int, usage string) {
	*p = value
	fs.Var(&boundedInt{P: p, Min: lo, Max: hi}, name, usage)
}

// Ranges shared by the commands, so the same flag means the same everywhere.
const (
	maxClients    = 100_000   // --clients
	maxCores      = 100_000   // --cores
	maxPool       = 1_000_000 // --pool
	maxCPUSeconds = 1e9       // --cpu-seconds (about 31 years of CPU)
	maxRequests   = 1 << 40   // --requests
	maxMissPct    = 1000      // --miss
)
