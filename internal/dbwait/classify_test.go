package dbwait_test

import (
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
)

const ms = time.Millisecond

// delta builds a host delta with every source present.
func delta(f func(d *hostsig.Delta)) *hostsig.Delta {
	d := &hostsig.Delta{Interval: 200 * ms}
	if f != nil {
		f(d)
	}
	return d
}

// steal builds a host delta with every source present and the given
// steal over n CPUs (0: unknown).
func steal(total time.Duration, n int) *hostsig.Delta {
	return delta(func(d *hostsig.Delta) { d.Steal, d.CPUs = total, n })
}

func absent(src ...hostsig.Source) func(*hostsig.Delta) {
	return func(d *hostsig.Delta) {
		for _, s := range src {
			d.Absent[s] = "not read"
		}
	}
}

// TestClassify covers each rule, its order and what makes it unknown.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outside time.Duration
		ev      dbwait.Evidence
		want    dbwait.Verdict
	}{
		{"within the threshold", 10 * ms, dbwait.Evidence{}, dbwait.Inside},
		{"negative difference", -ms, dbwait.Evidence{}, dbwait.Inside},
		{"no host samples", 50 * ms, dbwait.Evidence{Gap: time.Second}, dbwait.Unknown},
		{"throttled, cgroup PSI rose", 60 * ms, dbwait.Evidence{Gap: 40 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 2, 80*ms, 80*ms })}, dbwait.Throttled},
		// The database host's recording: its backend's run-queue wait
		// outside its timer, half the outside time or more.
		{"database backend waited half on its run queue", 20 * ms, dbwait.Evidence{DBHost: true, DBHostWait: 11 * ms, Probe: true, Host: delta(nil)}, dbwait.DBCPU},
		{"database backend waited under half, over a third: mixed", 20 * ms, dbwait.Evidence{DBHost: true, DBHostWait: 9 * ms, Probe: true, Host: delta(nil)}, dbwait.Mixed},
		{"database backend waited under a third", 20 * ms, dbwait.Evidence{DBHost: true, DBHostWait: 5 * ms, Probe: true, Host: delta(nil)}, dbwait.Network},
		{"database backend a third, the rest the network: mixed", 30 * ms, dbwait.Evidence{DBHost: true, DBHostWait: 11 * ms, Probe: true, Host: delta(nil)}, dbwait.Mixed},
		{"a stall and the database backend's wait, no network: not mixed", 30 * ms, dbwait.Evidence{DBHost: true, DBHostWait: 20 * ms, Probe: true, ProbeTail: 16 * ms, Host: delta(nil)}, dbwait.DBCPU},
		{"a lock waiter's backend read its query 276 ms late (issue 34)", 290 * ms, dbwait.Evidence{DBHost: true, DBHostWait: 276 * ms, Probe: true, Placed: true, BeforeDB: 280 * ms, Host: delta(nil)}, dbwait.DBCPU},
		{"the process's own CPU cause first", 20 * ms, dbwait.Evidence{DBHost: true, DBHostWait: 20 * ms, Runnable: 12 * ms, Probe: true, Host: delta(nil)}, dbwait.Runnable},
		{"throttled, but too little to explain half", 60 * ms, dbwait.Evidence{Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 1, 20*ms, 80*ms })}, dbwait.Network},
		{"throttled, cgroup PSI flat", 60 * ms, dbwait.Evidence{Gap: 40 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.SystemSome = 2, 80*ms, 80*ms })}, dbwait.Unknown},
		{"throttled, no cgroup PSI: machine PSI", 60 * ms, dbwait.Evidence{Gap: 30 * ms, Host: delta(func(d *hostsig.Delta) {
			absent(hostsig.SourceCgroupPSI)(d)
			d.Throttled, d.ThrottledTime, d.SystemSome = 1, 40*ms, 5*ms
		})}, dbwait.Throttled},
		{"throttled, no PSI at all", 60 * ms, dbwait.Evidence{Gap: 30 * ms, Host: delta(func(d *hostsig.Delta) {
			absent(hostsig.SourceCgroupPSI, hostsig.SourceSystemPSI)(d)
			d.Throttled, d.ThrottledTime = 1, 40*ms
		})}, dbwait.Throttled},
		// Throttling must be placed in the statement: by an event-free
		// stretch, the probe, or pro-rated over the sampled interval.
		{"throttled elsewhere in the interval, no gap", 60 * ms, dbwait.Evidence{Gap: 5 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 2, 80*ms, 80*ms })}, dbwait.Network},
		{"throttled most of the interval, no gap: pro-rated", 60 * ms, dbwait.Evidence{Gap: 5 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 2, 100*ms, 80*ms })}, dbwait.Throttled},
		{"throttling beats a gap", 300 * ms, dbwait.Evidence{Gap: 300 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 3, 250*ms, 250*ms })}, dbwait.Throttled},
		// Steal: per CPU at least half the difference, and a stall in the
		// trace at least as long.
		{"whole VM stolen for half the difference, with a gap", 40 * ms, dbwait.Evidence{Gap: 25 * ms, Host: steal(40*ms, 2)}, dbwait.Steal},
		{"per-CPU steal just under half", 40 * ms, dbwait.Evidence{Gap: 40 * ms, Host: steal(39*ms, 2)}, dbwait.Network},
		{"trickle over a long interval, no gap", 30 * ms, dbwait.Evidence{Gap: 5 * ms, Host: steal(20*ms, 2)}, dbwait.Network},
		{"trickle during an idle wait (gap), the lab's proxy", 31 * ms, dbwait.Evidence{Gap: 30 * ms, Host: steal(30*ms, 2)}, dbwait.Network},
		{"big steal without a gap", 40 * ms, dbwait.Evidence{Gap: 19 * ms, Host: steal(200*ms, 2)}, dbwait.Network},
		{"big steal without a gap, threads waited elsewhere in the interval", 40 * ms, dbwait.Evidence{Host: delta(func(d *hostsig.Delta) { d.Steal, d.CPUs, d.Wait = 200*ms, 2, 30*ms })}, dbwait.Network},
		{"big steal without a gap, threads waited most of the interval", 40 * ms, dbwait.Evidence{Host: delta(func(d *hostsig.Delta) { d.Steal, d.CPUs, d.Wait = 200*ms, 2, 120*ms })}, dbwait.Runnable},
		// The probe vouches only for the moments it woke: silent through
		// half the difference as the answer came, it cannot say.
		{"probe silent through the tail, throttled most of the interval", 20 * ms, dbwait.Evidence{Probe: true, ProbeLate: 2 * ms, Gap: 16 * ms, TailGap: 16 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome, d.CPUs = 1, 150*ms, 43*ms, 2 })}, dbwait.Throttled},
		{"probe silent through the tail, throttled a third of the interval", 20 * ms, dbwait.Evidence{Probe: true, ProbeLate: 2 * ms, Gap: 16 * ms, TailGap: 16 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome, d.CPUs = 1, 74*ms, 43*ms, 2 })}, dbwait.Network},
		{"probe silent through the tail, idle: network", 16 * ms, dbwait.Evidence{Probe: true, Gap: 12 * ms, TailGap: 12 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait, d.CPUs = 1*ms, 2 })}, dbwait.Network},
		{"a steal tick is not enough", 40 * ms, dbwait.Evidence{Gap: 40 * ms, Host: steal(10*ms, 2)}, dbwait.Network},
		{"one CPU: half the difference", 40 * ms, dbwait.Evidence{Gap: 20 * ms, Host: steal(20*ms, 1)}, dbwait.Steal},
		// The CPU-availability probe: on time for half the difference, the
		// process could run then, whatever the interval's counters summed.
		{"probe on time: run-queue wait over the interval is not the statement's", 30 * ms, dbwait.Evidence{Probe: true, ProbeLate: 2 * ms, ProbeTail: 2 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait = 63 * ms })}, dbwait.Network},
		{"probe on time: throttling elsewhere in the interval", 30 * ms, dbwait.Evidence{Probe: true, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.CgroupSome = 2, 80*ms })}, dbwait.Network},
		{"probe late: throttled", 95 * ms, dbwait.Evidence{Probe: true, ProbeLate: 80 * ms, ProbeTail: 80 * ms, Gap: 92 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 1, 92*ms, 86*ms })}, dbwait.Throttled},
		{"probe late: paused", 505 * ms, dbwait.Evidence{Probe: true, ProbeLate: 506 * ms, ProbeTail: 506 * ms, Gap: 506 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait = 5 * ms })}, dbwait.Paused},
		{"probe late: a short pause", 100 * ms, dbwait.Evidence{Probe: true, ProbeEvery: 20 * ms, ProbeLate: 95 * ms, ProbeTail: 95 * ms, Gap: 98 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait = 2 * ms })}, dbwait.Paused},
		{"no probe: a short silence is not a pause", 100 * ms, dbwait.Evidence{Gap: 98 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait = 2 * ms })}, dbwait.Network},
		// Every P busy: an answer that came then waited for a P to poll the
		// network, the goroutine still shown waiting.
		{"every P busy for half: runnable", 30 * ms, dbwait.Evidence{Probe: true, Busy: 16 * ms, Host: steal(0, 2)}, dbwait.Runnable},
		{"every P busy under half: network", 30 * ms, dbwait.Evidence{Probe: true, Busy: 10 * ms, Host: steal(0, 2)}, dbwait.Network},
		// What a CPU wait can explain leaves no more than the threshold:
		// not a wait elsewhere. The cgroup's CPU pressure counts, pro-rated;
		// the machine's does not.
		{"cgroup CPU pressure leaves under the threshold", 13 * ms, dbwait.Evidence{Probe: true, Host: delta(func(d *hostsig.Delta) { d.CgroupSome, d.CPUs = 70*ms, 2 })}, dbwait.Runnable},
		{"cgroup CPU pressure leaves over the threshold", 30 * ms, dbwait.Evidence{Probe: true, Host: delta(func(d *hostsig.Delta) { d.CgroupSome, d.CPUs = 70*ms, 2 })}, dbwait.Network},
		{"machine CPU pressure is no evidence", 13 * ms, dbwait.Evidence{Probe: true, Host: delta(func(d *hostsig.Delta) { d.SystemSome, d.CPUs = 200*ms, 2 })}, dbwait.Network},
		// A stall that ended as the query left delayed the statement's start.
		{"probe late as the query left: throttled", 39 * ms, dbwait.Evidence{Probe: true, Placed: true, ProbeLate: 38 * ms, ProbeHead: 38 * ms, Gap: 38 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome, d.CPUs = 1, 88*ms, 80*ms, 2 })}, dbwait.Throttled},
		{"probe on time but the goroutine runnable", 30 * ms, dbwait.Evidence{Probe: true, Runnable: 20 * ms, Host: delta(nil)}, dbwait.Runnable},
		{"no host samples, probe on time: network", 30 * ms, dbwait.Evidence{Probe: true, ProbeLate: 3 * ms, ProbeTail: 3 * ms}, dbwait.Network},
		{"no host samples, probe on time, the database backend waited half", 30 * ms, dbwait.Evidence{Probe: true, DBHost: true, DBHostWait: 20 * ms}, dbwait.DBCPU},
		{"no host samples, probe late", 30 * ms, dbwait.Evidence{Probe: true, ProbeLate: 25 * ms, ProbeTail: 25 * ms}, dbwait.Unknown},
		// Mixed: the process could not run for a third or more, and surely
		// could for another third or more (quota and a slow network together).
		{"quota and network together", 90 * ms, dbwait.Evidence{Probe: true, ProbeLate: 40 * ms, ProbeTail: 40 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 1, 80*ms, 80*ms })}, dbwait.Mixed},
		{"a stall's unsure start counts half: 52.5 of 90 ms, the rest could run", 90 * ms, dbwait.Evidence{Probe: true, ProbeLate: 40 * ms, ProbeTail: 40 * ms, ProbeUnsure: 25 * ms, ProbeTailUnsure: 25 * ms, Gap: 60 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 1, 80*ms, 80*ms })}, dbwait.Mixed},
		{"a stall that ended before the answer overlapped the wait: network", 90 * ms, dbwait.Evidence{Probe: true, ProbeLate: 60 * ms, Gap: 60 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 1, 80*ms, 80*ms })}, dbwait.Network},
		{"8 CPUs: two vCPUs lost are not half the VM", 40 * ms, dbwait.Evidence{Gap: 40 * ms, Host: steal(80*ms, 8)}, dbwait.Network},
		{"8 CPUs: the whole VM lost half", 40 * ms, dbwait.Evidence{Gap: 40 * ms, Host: steal(160*ms, 8)}, dbwait.Steal},
		{"CPU count unknown: steal of the whole difference", 40 * ms, dbwait.Evidence{Gap: 30 * ms, Host: steal(40*ms, 0)}, dbwait.Steal},
		{"CPU count unknown: steal under the difference", 40 * ms, dbwait.Evidence{Gap: 40 * ms, Host: steal(30*ms, 0)}, dbwait.Network},
		{"steal absent, gap", 40 * ms, dbwait.Evidence{Gap: 40 * ms, Host: delta(absent(hostsig.SourceSteal))}, dbwait.Unknown},
		{"steal beats paused", 500 * ms, dbwait.Evidence{Gap: 500 * ms, Host: steal(1000*ms, 2)}, dbwait.Steal},
		{"a gap with trickle steal is paused", 500 * ms, dbwait.Evidence{Gap: 500 * ms, Host: steal(10*ms, 2)}, dbwait.Paused},
		{"paused", 500 * ms, dbwait.Evidence{Gap: 500 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait = 10 * ms })}, dbwait.Paused},
		{"gap under MinPause", 100 * ms, dbwait.Evidence{Gap: 100 * ms, Host: delta(nil)}, dbwait.Network},
		{"gap covers under half", 500 * ms, dbwait.Evidence{Gap: 200 * ms, Host: delta(nil)}, dbwait.Network},
		{"run-queue wait absent", 40 * ms, dbwait.Evidence{Host: delta(absent(hostsig.SourceSchedstat))}, dbwait.Network},
		{"gap but run-queue wait grew (no cgroup PSI)", 500 * ms, dbwait.Evidence{Gap: 500 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait = 300 * ms; absent(hostsig.SourceCgroupPSI)(d) })}, dbwait.Runnable},
		{"gap but the cgroup's CPU pressure grew", 300 * ms, dbwait.Evidence{Gap: 300 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait, d.CgroupSome = 300*ms, 150*ms })}, dbwait.Runnable},
		{"gap, threads' run-queue wait summed, the cgroup's pressure low: a stop", 300 * ms, dbwait.Evidence{Gap: 300 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait, d.CgroupSome = 300*ms, 20*ms })}, dbwait.Paused},
		{"threads waited on the run queue", 40 * ms, dbwait.Evidence{Gap: 30 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait = 20 * ms })}, dbwait.Runnable},
		{"run-queue wait under half", 40 * ms, dbwait.Evidence{Gap: 30 * ms, Host: delta(func(d *hostsig.Delta) { d.Wait = 19 * ms })}, dbwait.Network},
		{"gap, throttle counters absent", 500 * ms, dbwait.Evidence{Gap: 500 * ms, Host: delta(absent(hostsig.SourceThrottle))}, dbwait.Unknown},
		{"runnable", 30 * ms, dbwait.Evidence{Runnable: 20 * ms, Host: delta(nil)}, dbwait.Runnable},
		{"network", 30 * ms, dbwait.Evidence{Runnable: ms, Gap: 25 * ms, Host: delta(nil)}, dbwait.Network},
		{"network needs throttle counters", 30 * ms, dbwait.Evidence{Host: delta(absent(hostsig.SourceThrottle))}, dbwait.Unknown},
		{"network needs steal", 30 * ms, dbwait.Evidence{Host: delta(absent(hostsig.SourceSteal))}, dbwait.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dbwait.Classify(tc.outside, tc.ev, dbwait.Options{}); got != tc.want {
				t.Errorf("Classify(%v, %+v) = %v, want %v", tc.outside, tc.ev, got, tc.want)
			}
		})
	}
}

func TestVerdictText(t *testing.T) {
	for v := range dbwait.NumVerdicts {
		b, _ := v.MarshalText()
		var back dbwait.Verdict
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("%v: round trip gave %v, %v", v, back, err)
		}
	}
	var v dbwait.Verdict
	if err := v.UnmarshalText([]byte("slow")); err == nil {
		t.Error("unknown verdict accepted")
	}
}

func TestConfidence(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outside time.Duration
		ev      dbwait.Evidence
		want    dbwait.Decision
	}{
		{"inside", 5 * ms, dbwait.Evidence{}, dbwait.Decision{Verdict: dbwait.Inside, Confidence: dbwait.High}},
		{"throttled with the probe late", 95 * ms, dbwait.Evidence{Probe: true, ProbeLate: 80 * ms, ProbeTail: 80 * ms, Gap: 92 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 1, 92*ms, 86*ms })},
			dbwait.Decision{Verdict: dbwait.Throttled, Confidence: dbwait.High}},
		{"throttled by counters and a gap, no probe", 60 * ms, dbwait.Evidence{Gap: 40 * ms, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 2, 80*ms, 80*ms })},
			dbwait.Decision{Verdict: dbwait.Throttled, Confidence: dbwait.Medium}},
		{"network: probe on time, counters flat", 30 * ms, dbwait.Evidence{Probe: true, Host: steal(0, 2)}, dbwait.Decision{Verdict: dbwait.Network, Confidence: dbwait.High}},
		{"network: probe on time, throttling in the interval", 30 * ms, dbwait.Evidence{Probe: true, Host: delta(func(d *hostsig.Delta) { d.Throttled, d.ThrottledTime, d.CgroupSome = 2, 80*ms, 80*ms })},
			dbwait.Decision{Verdict: dbwait.Network, Confidence: dbwait.Medium}},
		{"network by elimination", 30 * ms, dbwait.Evidence{Runnable: ms, Gap: 25 * ms, Host: delta(nil)}, dbwait.Decision{Verdict: dbwait.Network, Confidence: dbwait.Low}},
		{"unknown", 50 * ms, dbwait.Evidence{Gap: time.Second}, dbwait.Decision{Verdict: dbwait.Unknown, Confidence: dbwait.NoConfidence}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dbwait.Explain(tc.outside, tc.ev, dbwait.Options{})
			if got.Verdict != tc.want.Verdict || got.Confidence != tc.want.Confidence {
				t.Errorf("Explain(%v, %+v) = %v %v (%s), want %v %v", tc.outside, tc.ev, got.Verdict, got.Confidence, got.Rule, tc.want.Verdict, tc.want.Confidence)
			}
			if got.Rule == "" {
				t.Errorf("Explain(%v) gave no rule", tc.outside)
			}
		})
	}
}
