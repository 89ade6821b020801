package jfr

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"PT0S", 0},
		{"PT0.17439958S", 174399580 * time.Nanosecond},
		{"PT0.005S", 5 * time.Millisecond},
		{"PT1M2.5S", time.Minute + 2500*time.Millisecond},
		{"PT2H", 2 * time.Hour},
		{"PT8H6M12.345S", 8*time.Hour + 6*time.Minute + 12345*time.Millisecond},
		{"PT-0.5S", -500 * time.Millisecond},
		{"PT-1M-2.5S", -62500 * time.Millisecond},
		{"-PT1S", -time.Second},
		{"P1DT2H", 26 * time.Hour},
		{"P2D", 48 * time.Hour},
		{"pt1,5s", 1500 * time.Millisecond},
		{"PT0.000000001S", 1},
		{"PT2562047H47M16.854775807S", math.MaxInt64},
		{"PT-2562047H-47M-16.854775808S", math.MinInt64},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDurationErrors(t *testing.T) {
	for _, in := range []string{
		"", "P", "PT", "T1S", "1S", "0.5", "PT1", "PTS", "PT1.S", "PT.5S", "PT1.5M", "PT0.1234567891S",
		"P1Y", "P1M", "P1W", "PT1D", "P1H", "PT1S2M", "PT1S1S", "PT1H1H", "P1DT", "PTT1S", "PT1X",
		"PT2562048H", "PT9223372036854775808S", "-PT-2562047H-47M-16.854775808S", "PT--1S", "PT+-1S",
	} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, d)
		} else if !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("ParseDuration(%q) error %q does not name the input", in, err)
		}
	}
}

// javaDuration formats d as java.time.Duration.toString does.
func javaDuration(d time.Duration) string {
	if d == 0 {
		return "PT0S"
	}
	secs := int64(d) / 1e9
	nanos := int64(d) % 1e9
	if nanos < 0 {
		secs, nanos = secs-1, nanos+1e9
	}
	hours, minutes, s := secs/3600, (secs%3600)/60, secs%60
	b := []byte("PT")
	if hours != 0 {
		b = append(strconv.AppendInt(b, hours, 10), 'H')
	}
	if minutes != 0 {
		b = append(strconv.AppendInt(b, minutes, 10), 'M')
	}
	if s == 0 && nanos == 0 && len(b) > 2 {
		return string(b)
	}
	switch {
	case s < 0 && nanos > 0 && s == -1:
		b = append(b, "-0"...)
	case s < 0 && nanos > 0:
		b = strconv.AppendInt(b, s+1, 10)
	default:
		b = strconv.AppendInt(b, s, 10)
	}
	if nanos > 0 {
		f := nanos + 1e9
		if s < 0 {
			f = 2e9 - nanos
		}
		frac := strings.TrimRight(strconv.FormatInt(f, 10), "0")
		b = append(b, '.')
		b = append(b, frac[1:]...)
	}
	return string(append(b, 'S'))
}

func TestJavaDurationFormat(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "PT0S", 174399580: "PT0.17439958S", -500 * time.Millisecond: "PT-0.5S", -62500 * time.Millisecond: "PT-1M-2.5S",
		2 * time.Hour: "PT2H", time.Minute + 2500*time.Millisecond: "PT1M2.5S", -1500 * time.Millisecond: "PT-1.5S",
	} {
		if got := javaDuration(d); got != want {
			t.Errorf("javaDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// FuzzParseDuration: whatever parses survives a round trip through the
// format Java prints, and every duration Java prints parses back.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"PT0.17439958S", "PT1M2.5S", "PT2H", "PT-0.5S", "P1DT2H", "-PT1S", "PT0S", "pt1,5s", "PT2562047H47M16.854775807S"} {
		f.Add(s, int64(0))
	}
	f.Add("", int64(math.MinInt64))
	f.Add("", int64(-1500000000))
	f.Fuzz(func(t *testing.T, s string, n int64) {
		if d, err := ParseDuration(s); err == nil {
			if back, err := ParseDuration(javaDuration(d)); err != nil || back != d {
				t.Fatalf("%q = %v, printed as %q, parsed back as %v, %v", s, d, javaDuration(d), back, err)
			}
		}
		d := time.Duration(n)
		if back, err := ParseDuration(javaDuration(d)); err != nil || back != d {
			t.Fatalf("%v printed as %q parsed back as %v, %v", d, javaDuration(d), back, err)
		}
	})
}
