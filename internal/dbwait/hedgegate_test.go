package dbwait

import (
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

// TestHedgeGate: on a host under CPU pressure, without a recording of the
// database host, a network verdict is hedged "network or db-cpu" only
// when its wait past the trace's usual path is half its difference or
// more, 2·(Outside − usual) ≥ Outside: exactly at the boundary it is, a
// nanosecond under it it is not, and without a usual wait (no floor, no
// median within the threshold) every pressed network verdict is.
func TestHedgeGate(t *testing.T) {
	ms := time.Millisecond
	pressed := &hostsig.Delta{Interval: 200 * ms, SystemSome: 150 * ms}
	quiet := &hostsig.Delta{Interval: 200 * ms, SystemSome: 20 * ms}
	floor := usualPath{wait: 20 * ms, n: 59, floor: true}
	median := usualPath{wait: 4 * ms, n: 150}
	none := usualPath{}
	for _, tc := range []struct {
		name    string
		verdict Verdict
		host    *hostsig.Delta
		dbHost  bool
		outside time.Duration
		u       usualPath
		hedged  bool
		words   string // in the rule
	}{
		{"floor 20 ms, 40 ms: exactly half past it", Network, pressed, false, 40 * ms, floor, true, "waited 20 ms past the trace's network floor of 20 ms (median of the 59 statements on time), half its difference or more"},
		{"floor 20 ms, 1 ns under 40 ms", Network, pressed, false, 40*ms - 1, floor, false, "not hedged for this host's CPU pressure"},
		{"floor 20 ms, 1 ns over 40 ms", Network, pressed, false, 40*ms + 1, floor, true, "network or db-cpu"},
		{"floor 20 ms, at the floor", Network, pressed, false, 21 * ms, floor, false, "waited 1 ms past the trace's network floor"},
		{"floor 20 ms, under the floor", Network, pressed, false, 15 * ms, floor, false, "waited 0 ms past"},
		{"no floor, no usual wait: 21 ms", Network, pressed, false, 21 * ms, none, true, "the trace has no usual wait to set apart"},
		{"median 4 ms, 8 ms exactly", Network, pressed, false, 8 * ms, median, true, "past the trace's usual difference of 4 ms (median of all 150)"},
		{"median 4 ms, 1 ns under 8 ms", Network, pressed, false, 8*ms - 1, median, false, "not hedged"},
		{"median 4 ms, 30 ms", Network, pressed, false, 30 * ms, median, true, "waited 26 ms past"},
		{"quiet host: stands", Network, quiet, false, 80 * ms, none, false, ""},
		{"with the recording: stands", Network, pressed, true, 80 * ms, none, false, ""},
		{"no host sample: stands", Network, nil, false, 80 * ms, none, false, ""},
		{"not network: stands", Runnable, pressed, false, 80 * ms, none, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Decision{Verdict: tc.verdict, Rule: "before", Confidence: High}
			dec, alt := hedge(in, Evidence{Host: tc.host, DBHost: tc.dbHost}, tc.outside, tc.u)
			if got := alt == DBCPU; got != tc.hedged {
				t.Fatalf("hedged %v (%v, %s), want %v", got, alt, dec.Rule, tc.hedged)
			}
			if dec.Verdict != tc.verdict {
				t.Errorf("verdict %v, want %v unchanged", dec.Verdict, tc.verdict)
			}
			switch {
			case tc.hedged && dec.Confidence != Low:
				t.Errorf("hedged at confidence %v, want low", dec.Confidence)
			case !tc.hedged && dec.Confidence != High:
				t.Errorf("not hedged, confidence %v, want high as it was", dec.Confidence)
			case tc.words == "" && dec.Rule != "before":
				t.Errorf("rule %q, want it as it was", dec.Rule)
			case !strings.HasPrefix(dec.Rule, "before"):
				t.Errorf("rule %q does not keep the rule that decided", dec.Rule)
			case !strings.Contains(dec.Rule, tc.words):
				t.Errorf("rule %q, want it to say %q", dec.Rule, tc.words)
			}
		})
	}
}
