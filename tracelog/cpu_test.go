package tracelog

import (
	"testing"
	"time"
)

func TestCPURoundTrip(t *testing.T) {
	tests := []struct {
		d    time.Duration
		text string
	}{
		{0, "0"},
		{10 * time.Millisecond, "0.01"},
		{12340 * time.Millisecond, "12.34"},
		{3 * time.Hour, "10800"},
	}
	for _, tt := range tests {
		if got := FormatCPU(tt.d); got != tt.text {
			t.Errorf("FormatCPU(%v) = %q, want %q", tt.d, got, tt.text)
		}
		if got, err := ParseCPU(tt.text); err != nil || got != tt.d {
			t.Errorf("ParseCPU(%q) = %v, %v; want %v", tt.text, got, err, tt.d)
		}
	}
	for _, bad := range []string{"", "-1", "NaN", "Inf", "1e10", "12s", " 1"} {
		if _, err := ParseCPU(bad); err == nil {
			t.Errorf("ParseCPU(%q) succeeded", bad)
		}
	}
}

func FuzzParseCPU(f *testing.F) {
	for _, s := range []string{"0", "12.34", "0.01", "-1", "NaN", "1e9", "0x1p4", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseCPU(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseCPU(%q) = %v < 0", s, d)
		}
		// what we write, we read back exactly (to the nanosecond)
		back, err := ParseCPU(FormatCPU(d))
		if err != nil || back-d > 1 || d-back > 1 {
			t.Fatalf("round trip of %v: %v, %v", d, back, err)
		}
	})
}

func TestProbeRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		on   bool
		late time.Duration
	}{
		{FormatProbeLate(37 * time.Millisecond), false, 37 * time.Millisecond},
		{FormatProbeOn(ProbeEvery, ProbeLate), true, ProbeLate},
	} {
		m, err := ParseProbe(tt.msg)
		if err != nil || m.On != tt.on || m.Late != tt.late || tt.on && m.Every != ProbeEvery {
			t.Errorf("ParseProbe(%q) = %+v, %v; want on %v, late %v", tt.msg, m, err, tt.on, tt.late)
		}
	}
	for _, bad := range []string{"", "late_ns=", "late_ns=-1", "on every_ns=5", "on every_ns=x late_ns=5", "late=5"} {
		if _, err := ParseProbe(bad); err == nil {
			t.Errorf("ParseProbe(%q) succeeded", bad)
		}
	}
}

func FuzzParseProbe(f *testing.F) {
	f.Add("late_ns=5000000")
	f.Add("on every_ns=10000000 late_ns=2000000")
	f.Fuzz(func(t *testing.T, msg string) {
		if m, err := ParseProbe(msg); err == nil && (m.Late < 0 || m.Every < 0) {
			t.Fatalf("ParseProbe(%q) = %+v: negative", msg, m)
		}
	})
}
