package agent

import (
	"testing"
	"time"
)

func TestCPUSecondsRoundTrip(t *testing.T) {
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
		if got := FormatCPUSeconds(tt.d); got != tt.text {
			t.Errorf("FormatCPUSeconds(%v) = %q, want %q", tt.d, got, tt.text)
		}
		if got, err := ParseCPUSeconds(tt.text); err != nil || got != tt.d {
			t.Errorf("ParseCPUSeconds(%q) = %v, %v; want %v", tt.text, got, err, tt.d)
		}
	}
	for _, bad := range []string{"", "-1", "NaN", "Inf", "1e10", "12s", " 1"} {
		if _, err := ParseCPUSeconds(bad); err == nil {
			t.Errorf("ParseCPUSeconds(%q) succeeded", bad)
		}
	}
}

func FuzzParseCPUSeconds(f *testing.F) {
	for _, s := range []string{"0", "12.34", "0.01", "-1", "NaN", "1e9", "0x1p4", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseCPUSeconds(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseCPUSeconds(%q) = %v < 0", s, d)
		}
		// what we write, we read back exactly (to the nanosecond)
		back, err := ParseCPUSeconds(FormatCPUSeconds(d))
		if err != nil || back-d > 1 || d-back > 1 {
			t.Fatalf("round trip of %v: %v, %v", d, back, err)
		}
	})
}

func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"", "5", "0.25", "300", "301", "-1", "NaN", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseSeconds(s)
		if err == nil && (d <= 0 || d > MaxTraceSeconds*time.Second) {
			t.Fatalf("parseSeconds(%q) = %v, outside (0, %ds]", s, d, MaxTraceSeconds)
		}
	})
}
