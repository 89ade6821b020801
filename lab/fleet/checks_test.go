package fleet

import (
	"testing"
	"time"
)

// TestCheck: each phase's truth against verdicts right and wrong.
func TestCheck(t *testing.T) {
	names := map[string]string{"127.0.0.1:1": "A", "127.0.0.1:2": "B"}
	min := 3 * time.Second
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	throttle := Truth{Scope: "local", Instance: "127.0.0.1:2", DBPath: "all-requests", Period: 4 * min, Cause: "throttled"}
	for _, tc := range []struct {
		name  string
		truth Truth
		v     *VerdictOut
		fails []string
	}{
		{"throttle right", throttle, &VerdictOut{Scope: "local", Instance: "127.0.0.1:2", DBPath: "all-requests", Period: 4 * min, Cause: "throttled",
			BadSteps: map[string][]int{"127.0.0.1:2": {1, 5}, "127.0.0.1:1": {3}}}, nil},
		{"throttle minutes outside", throttle, &VerdictOut{Scope: "local", Instance: "127.0.0.1:2", DBPath: "all-requests", Period: 4 * min, Cause: "throttled",
			BadSteps: map[string][]int{"127.0.0.1:2": {1, 3, 5}}}, []string{"p/db: bad minutes"}},
		{"throttle wrong instance and period", throttle, &VerdictOut{Scope: "local", Instance: "127.0.0.1:1", DBPath: "all-requests", Period: 5 * min, Cause: "throttled",
			BadSteps: map[string][]int{"127.0.0.1:2": {2, 6}}}, []string{"p/db: instance", "p/db: period"}},
		{"shared", Truth{Scope: "shared", DBPath: "db-only"}, &VerdictOut{Scope: "local", Instance: "127.0.0.1:1", DBPath: "db-only"}, []string{"p/db: scope"}},
		{"upstream named", Truth{Scope: "shared", Dependency: "outbound", Route: "GET /quote"},
			&VerdictOut{Scope: "shared", Dependency: "outbound", Route: "GET /quote"}, nil},
		{"upstream taken for the host", Truth{Scope: "shared", Dependency: "outbound", Route: "GET /quote"},
			&VerdictOut{Scope: "shared", Dependency: "host"}, []string{"p/db: dependency", "p/db: route"}},
		{"none", Truth{Scope: "none"}, &VerdictOut{Scope: "none"}, nil},
		{"continuous, no period", Truth{Scope: "shared", Continuous: true}, &VerdictOut{Scope: "shared"}, nil},
		{"continuous given a period", Truth{Scope: "shared", Continuous: true}, &VerdictOut{Scope: "shared", Period: 5 * min}, []string{"p/db: period"}},
		{"gc by the peer rule", Truth{Scope: "local", Instance: "127.0.0.1:1", Cause: "gc", Rule: "peer"},
			&VerdictOut{Scope: "local", Instance: "127.0.0.1:1", Cause: "gc", Rule: "threshold+peer"}, nil},
		{"gc by the threshold only", Truth{Scope: "local", Instance: "127.0.0.1:1", Cause: "gc", Rule: "peer"},
			&VerdictOut{Scope: "local", Instance: "127.0.0.1:1", Cause: "cpu-pressure", Rule: "threshold"}, []string{"p/db: host evidence", "p/db: rule"}},
		{"thin, a lower percentile", Truth{Scope: "shared", Thin: true}, &VerdictOut{Scope: "shared", Quantile: 0.75}, nil},
		{"thin, the p95 kept", Truth{Scope: "shared", Thin: true}, &VerdictOut{Scope: "shared", Quantile: 0.95}, []string{"p/db: percentile"}},
		{"no verdict", Truth{Scope: "none"}, nil, []string{"p/db: triage ran"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &PhaseResult{Name: "p", Signal: "db", Truth: tc.truth, Verdict: tc.v, Error: "boom", Start: start}
			if tc.truth.Period > 0 { // bursts in minutes 1 and 5, each half a minute
				p.Faults = []Fault{{From: start.Add(min + min/10), To: start.Add(min + 6*min/10)}, {From: start.Add(5*min + min/10), To: start.Add(5*min + 6*min/10)}}
			}
			var fails []string
			for _, c := range check(p, names, min) {
				if !c.OK {
					fails = append(fails, c.Name)
				}
			}
			if len(fails) != len(tc.fails) {
				t.Fatalf("failed checks %q, want %q", fails, tc.fails)
			}
			for i := range fails {
				if fails[i] != tc.fails[i] {
					t.Errorf("failed checks %q, want %q", fails, tc.fails)
				}
			}
		})
	}
}

// TestThinkPacer: the first request within one think time, then think
// times of the right mean, never backwards.
func TestThinkPacer(t *testing.T) {
	const think = 200 * time.Millisecond
	p := thinkPacer(think)
	if d := p.Due(0, 0); d < 0 || d > think {
		t.Errorf("first due %v, want within [0, %v]", d, think)
	}
	var sum time.Duration
	const n = 20000
	for i := range n {
		d := p.Due(uint64(i+1), time.Second)
		if d < time.Second {
			t.Fatalf("due %v before last", d)
		}
		sum += d - time.Second
	}
	// The mean of n exponential draws has a standard error of think/√n
	// (1.4 ms here); 5 standard errors is 7 ms.
	if mean := sum / n; mean < think-7*time.Millisecond || mean > think+7*time.Millisecond {
		t.Errorf("mean think %v, want %v ± 7ms", mean, think)
	}
}
