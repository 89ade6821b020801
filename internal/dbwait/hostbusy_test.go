package dbwait

import (
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

// TestHostBusyAgreesWithHedge: hostBusy, which lets the cgroup's pro-rated
// CPU pressure yield to the probe (cgroupPressureMoot), is the very test
// hedge makes before it qualifies a network verdict "network or db-cpu":
// where one says a host was under CPU pressure and no recording covered
// the statement, the other hedges (a statement with no usual wait to set
// apart), and nowhere else.
func TestHostBusyAgreesWithHedge(t *testing.T) {
	ms := time.Millisecond
	noPSI := func(wait time.Duration) *hostsig.Delta {
		d := &hostsig.Delta{Interval: 200 * ms, Wait: wait}
		d.Absent[hostsig.SourceSystemPSI] = "not read"
		return d
	}
	neither := noPSI(0)
	neither.Absent[hostsig.SourceSchedstat] = "not read"
	for _, tc := range []struct {
		name string
		ev   Evidence
		busy bool
	}{
		{"machine PSI half the interval", Evidence{Host: &hostsig.Delta{Interval: 200 * ms, SystemSome: 100 * ms}}, true},
		{"machine PSI under half", Evidence{Host: &hostsig.Delta{Interval: 200 * ms, SystemSome: 99 * ms}}, false},
		{"no PSI: threads' run-queue wait half", Evidence{Host: noPSI(100 * ms)}, true},
		{"no PSI: threads' run-queue wait under half", Evidence{Host: noPSI(99 * ms)}, false},
		{"neither counter", Evidence{Host: neither}, false},
		{"no host sample", Evidence{}, false},
		{"the recording covers it", Evidence{DBHost: true, Host: &hostsig.Delta{Interval: 200 * ms, SystemSome: 200 * ms}}, false},
		{"the database host's metrics: busy", Evidence{DBHostPressure: &PressureDelta{Some: 8 * time.Second, Interval: 15 * time.Second}, Host: &hostsig.Delta{Interval: 200 * ms}}, true},
		{"the database host's metrics: idle, this host busy", Evidence{DBHostPressure: &PressureDelta{Some: time.Second, Interval: 15 * time.Second}, Host: &hostsig.Delta{Interval: 200 * ms, SystemSome: 200 * ms}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hostBusy(tc.ev, tc.ev.Host); got != tc.busy {
				t.Errorf("hostBusy = %v, want %v", got, tc.busy)
			}
			_, alt := hedge(Decision{Verdict: Network, Rule: "r", Confidence: High}, tc.ev, 80*ms, usualPath{})
			if hedged := alt == DBCPU; hedged != tc.busy {
				t.Errorf("hedge hedged %v where hostBusy says %v", hedged, tc.busy)
			}
		})
	}
}
