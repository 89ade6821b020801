package agent

import (
	"testing"
	"time"
)

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
