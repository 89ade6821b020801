package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNumericFlags: every numeric flag refuses NaN, ±Inf and values out of
// its range, with an error naming the flag.
func TestNumericFlags(t *testing.T) {
	serial := fixtureTrace(t, "serial")
	jfrFile := filepath.Join(t.TempDir(), "x.jfr")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"analyze", "--predict", "scale=queryDB:NaN", serial}, "FACTOR a number from 0 to 1000"},
		{[]string{"analyze", "--predict", "scale=queryDB:Inf", serial}, "FACTOR a number from 0 to 1000"},
		{[]string{"analyze", "--predict", "scale=queryDB:1e11", serial}, "FACTOR a number from 0 to 1000"},
		{[]string{"analyze", "--json", "--clients", "NaN", serial}, `invalid value "NaN" for flag -clients: want a finite number`},
		{[]string{"analyze", "--clients", "-1", serial}, "flag -clients"},
		{[]string{"analyze", "--clients", "1e300", serial}, "flag -clients"},
		{[]string{"analyze", "--cpu-seconds", "Inf", serial}, `invalid value "Inf" for flag -cpu-seconds`},
		{[]string{"analyze", "--cpu-seconds", "-0.5", serial}, "flag -cpu-seconds"},
		{[]string{"analyze", "--cores", "NaN", serial}, "flag -cores"},
		{[]string{"analyze", "--pool", "-3", serial}, "flag -pool: want a whole number from 0"},
		{[]string{"analyze", "--min-share", "200", serial}, "flag -min-share"},
		{[]string{"analyze", "--min-share", "nan", serial}, "flag -min-share"},
		{[]string{"analyze", "--handler", "A.b", "--requests", "NaN", jfrFile}, "flag -requests"},
		{[]string{"compare", "--miss", "NaN", serial, serial}, `invalid value "NaN" for flag -miss`},
		{[]string{"compare", "--miss", "0", serial, serial}, "flag -miss: want a finite number above 0"},
		{[]string{"compare", "--miss", "-5", serial, serial}, "flag -miss"},
		{[]string{"compare", "--clients", "-1", serial, serial}, "flag -clients"},
		{[]string{"compare", "--clients", "Inf", serial, serial}, "flag -clients"},
		{[]string{"demo-trace", "--clients", "0"}, "flag -clients"},
		{[]string{"demo-trace", "--requests", "1e3"}, "flag -requests"},
		{[]string{"capture", "--seconds", "0", "http://127.0.0.1:1"}, "flag -seconds"},
		{[]string{"capture", "--seconds", "99999", "http://127.0.0.1:1"}, "flag -seconds"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, _, err := runCLI(t, c.args...)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := oneLine(t, err.Error())
			if !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, c.args[0]+": ") {
				t.Errorf("err = %q, want %q after %q", msg, c.want, c.args[0]+": ")
			}
		})
	}
}

// TestNumericFlagsAccept: values in range still work, in every notation
// strconv knows.
func TestNumericFlagsAccept(t *testing.T) {
	for _, c := range []struct {
		f    finiteFloat
		v    string
		want float64
	}{
		{finiteFloat{Min: 0, Max: 10}, "0", 0},
		{finiteFloat{Min: 0, Max: 10}, "10", 10},
		{finiteFloat{Min: 0, Max: 10}, "2.5e0", 2.5},
		{finiteFloat{Min: 0, Max: 10, OpenMin: true}, "0.001", 0.001},
	} {
		var x float64
		c.f.P = &x
		if err := c.f.Set(c.v); err != nil || x != c.want {
			t.Errorf("Set(%q) = %v, %g", c.v, err, x)
		}
	}
	var n int
	f := boundedInt{P: &n, Min: 1, Max: 5}
	if err := f.Set("5"); err != nil || n != 5 {
		t.Errorf("Set(5) = %v, %d", err, n)
	}
	for _, v := range []string{"0", "6", "1.5", "NaN", ""} {
		if err := f.Set(v); err == nil {
			t.Errorf("Set(%q) accepted", v)
		}
	}
}
