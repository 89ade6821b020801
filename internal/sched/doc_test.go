package sched

import (
	"os"
	"strings"
	"testing"
)

// TestDocsFrameTable: docs/sched.md lists every row of the frame table.
func TestDocsFrameTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/sched.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range DefaultPatterns {
		name := p.Func
		if p.Prefix {
			name += "*"
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/sched.md does not list %q", name)
		}
	}
	for _, th := range []string{"`SchedShare` | 10 %", "`MinSamples` | 50", "`BurstGap` | 1 ms", "`MinBurst` | 16"} {
		if !strings.Contains(string(doc), th) {
			t.Errorf("docs/sched.md does not state %q", th)
		}
	}
	if DefaultThresholds.SchedShare != 0.10 || DefaultThresholds.MinSamples != 50 || DefaultThresholds.MinBurst != 16 {
		t.Error("the thresholds changed: update docs/sched.md")
	}
}
