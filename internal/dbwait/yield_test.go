package dbwait

import (
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

// TestPressureYieldsToProbe (issue 34, item 1): a runnable verdict that
// rests on the process cgroup's CPU pressure alone, pro-rated — the probe
// saw the process able to run as the query left and as the answer came,
// no recording of the database host covers the statement, the cgroup
// was not throttled in the sampled interval, and without
// the pressure more than the threshold is left — yields to what the probe
// says, network, only where the hedge qualifies that as "network or
// db-cpu" (this host under CPU pressure, the wait past the trace's usual
// path for half the difference). Everywhere else the runnable verdict
// stands: a plain network verdict would claim the network for what the
// pressure may explain.
func TestPressureYieldsToProbe(t *testing.T) {
	ms := time.Millisecond
	host := func(system time.Duration, f ...func(*hostsig.Delta)) *hostsig.Delta {
		d := &hostsig.Delta{Interval: 200 * ms, CgroupSome: 70 * ms, SystemSome: system, CPUs: 2}
		for _, f := range f {
			f(d)
		}
		return d
	}
	pressed, calm := host(150*ms), host(20*ms)
	noCgroupPSI := host(150*ms, func(d *hostsig.Delta) { d.Absent[hostsig.SourceCgroupPSI] = "cgroup v1" })
	floor := usualPath{wait: 10 * ms, n: 40, floor: true}
	for _, tc := range []struct {
		name     string
		outside  time.Duration
		ev       Evidence
		u        usualPath
		pressure bool // pressureOnly
		yields   bool // to "network or db-cpu"
	}{
		{"pressed host, no usual wait: yields", 13 * ms, Evidence{Probe: true, Host: pressed}, usualPath{}, true, true},
		{"pressed host, past the floor for half: yields", 25 * ms, Evidence{Probe: true, Host: host(150*ms, func(d *hostsig.Delta) { d.CgroupSome = 140 * ms })}, floor, true, true},
		{"calm host: runnable stands", 13 * ms, Evidence{Probe: true, Host: calm}, usualPath{}, true, false},
		{"at the usual path: runnable stands", 13 * ms, Evidence{Probe: true, Host: pressed}, floor, true, false},
		{"with the database host's recording: not the pressure alone", 13 * ms, Evidence{Probe: true, DBHost: true, Host: pressed}, usualPath{}, false, false},
		{"the goroutine runnable: not the pressure alone", 13 * ms, Evidence{Probe: true, Runnable: 5 * ms, Host: pressed}, usualPath{}, false, false},
		{"every P busy: not the pressure alone", 13 * ms, Evidence{Probe: true, Busy: 4 * ms, Host: pressed}, usualPath{}, false, false},
		{"the probe late for half: not the pressure alone", 13 * ms, Evidence{Probe: true, ProbeLate: 8 * ms, ProbeTail: 8 * ms, Host: pressed}, usualPath{}, false, false},
		{"the cgroup throttled in the interval: its own quota's pressure", 13 * ms, Evidence{Probe: true, Host: host(150*ms, func(d *hostsig.Delta) { d.Throttled = 1 })}, usualPath{}, false, false},
		{"no probe: not the pressure alone", 13 * ms, Evidence{Host: pressed}, usualPath{}, false, false},
		{"no cgroup PSI: not the pressure alone", 13 * ms, Evidence{Probe: true, Host: noCgroupPSI}, usualPath{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pressureOnly(tc.outside, tc.ev, Options{}); got != tc.pressure {
				t.Fatalf("pressureOnly = %v, want %v", got, tc.pressure)
			}
			if !tc.pressure {
				return
			}
			// the verdict the pressure gives, and what Finalize re-decides
			dec := Explain(tc.outside, tc.ev, Options{})
			if dec.Verdict != Runnable || dec.Confidence != Low {
				t.Fatalf("Explain = %v %v (%s), want runnable, low", dec.Verdict, dec.Confidence, dec.Rule)
			}
			got, alt := yieldToProbe(tc.outside, tc.ev, tc.u)
			if yields := alt == DBCPU; yields != tc.yields {
				t.Fatalf("yields %v (%v %v: %s), want %v", yields, got.Verdict, alt, got.Rule, tc.yields)
			}
			if !tc.yields {
				return
			}
			if got.Verdict != Network || got.Confidence != Low {
				t.Errorf("yielded to %v %v, want network, low", got.Verdict, got.Confidence)
			}
			for _, w := range []string{"the process could run for", "the cgroup's CPU pressure, 70 ms in 200 ms sampled", "cannot place itself where the probe saw the process run", "network or db-cpu", "latscope dbhost"} {
				if tc.ev.Host.CgroupSome != 70*ms && strings.HasPrefix(w, "the cgroup's") {
					continue
				}
				if !strings.Contains(got.Rule, w) {
					t.Errorf("rule %q does not say %q", got.Rule, w)
				}
			}
		})
	}
}
