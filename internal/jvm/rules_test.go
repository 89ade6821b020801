package jvm

import (
	"slices"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
)

func TestMatchFrame(t *testing.T) {
	tests := []struct {
		method, name string
		want         bool
	}{
		{"com.acme.DemoController.handle", "DemoController.handle", true},
		{"com.acme.DemoController.handle", "com.acme.DemoController.handle", true},
		{"com.acme.DemoController.handle", "handle", true},
		{"Outer$Inner.handle", "Inner.handle", true},
		{"com.acme.MyDemoController.handle", "DemoController.handle", false},
		{"com.acme.DemoController.handleAll", "DemoController.handle", false},
		{"com.acme.DemoController.lambda$handle$0", "DemoController.handle", false},
		{"Probe.handle", "Probe.handle", true},
	}
	for _, tt := range tests {
		if got := MatchFrame(tt.method, tt.name); got != tt.want {
			t.Errorf("MatchFrame(%q, %q) = %v, want %v", tt.method, tt.name, got, tt.want)
		}
	}
}

// TestLonger: a threshold the findings cannot read counts as longer than
// the one they ask for.
func TestLonger(t *testing.T) {
	for s, want := range map[string]bool{"20 ms": true, "1 ms": false, "999 us": false, "1 s": true, "0 ns": false, "garbage": true} {
		if got := longer(s, WantThreshold); got != want {
			t.Errorf("longer(%q, 1 ms) = %v, want %v", s, got, want)
		}
	}
}

// TestPoolSuffixIsBudgetPool: budget's pool cap (--pool) must see the
// JVM's pool waits, whose mechanisms end in jfr.PoolSuffix.
func TestPoolSuffixIsBudgetPool(t *testing.T) {
	if !slices.Contains(budget.PoolMechanisms, jfr.PoolSuffix) {
		t.Errorf("budget.PoolMechanisms %q lacks jfr.PoolSuffix %q", budget.PoolMechanisms, jfr.PoolSuffix)
	}
}
