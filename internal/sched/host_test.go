package sched

import (
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

func quota(cpus float64) hostsig.Quota {
	return hostsig.Quota{Limited: true, CPUs: cpus, Period: 100 * time.Millisecond}
}

// TestProcs compares GOMAXPROCS with limits.
func TestProcs(t *testing.T) {
	cases := []struct {
		name              string
		host              Host
		psSeen            int
		fit, def          int
		above, parentMiss bool
	}{
		{"nothing known", Host{}, 32, 0, 0, false, false},
		{"CPUs only", Host{NumCPU: 2}, 32, 2, 2, true, false},
		{"no limit, exact GOMAXPROCS", Host{GOMAXPROCS: 2, NumCPU: 2, Limit: &hostsig.Limit{}}, 2, 2, 2, false, false},
		{"own quota 1.5 of 8 CPUs", Host{GOMAXPROCS: 8, NumCPU: 8, Limit: &hostsig.Limit{Quota: quota(1.5), Own: quota(1.5), Path: "/a"}}, 0, 2, 2, true, false},
		{"parent quota tighter than own", Host{NumCPU: 8, Limit: &hostsig.Limit{Quota: quota(1), Own: quota(4), Path: "/a"}}, 8, 2, 4, true, true},
		{"parent quota, none own", Host{NumCPU: 8, Limit: &hostsig.Limit{Quota: quota(3), Path: "/a"}}, 3, 3, 8, false, true},
		{"given quota, CPUs unknown", QuotaHost(2), 16, 2, 2, true, false},
		{"quota of 0.5 CPUs still fits 2", QuotaHost(0.5), 2, 2, 2, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := procsOf(c.host, c.psSeen)
			if p.Fit != c.fit || p.RuntimeDefault != c.def || p.Above() != c.above || p.ParentMissed() != c.parentMiss {
				t.Errorf("procs %+v: fit %d default %d above %v parent missed %v; want %d %d %v %v",
					p, p.Fit, p.RuntimeDefault, p.Above(), p.ParentMissed(), c.fit, c.def, c.above, c.parentMiss)
			}
			r := &Report{Procs: p, Thresholds: DefaultThresholds, CPU: CPU{Samples: 100}}
			kinds := map[FindingKind]bool{}
			for _, f := range r.Findings() {
				kinds[f.Kind] = true
			}
			if kinds[FindProcsAbove] != c.above || kinds[FindParentLimit] != c.parentMiss {
				t.Errorf("findings %v", r.Findings())
			}
		})
	}
}

// TestSampleFindings: without samples, or with too few, the share is not
// judged.
func TestSampleFindings(t *testing.T) {
	sched := func(n, schedN int64) CPU {
		acc := newCPUAcc(DefaultFrames, &DefaultOptions.Rules)
		acc.add(sampleClass{group: GroupNone}, n-schedN, n-schedN)
		acc.add(sampleClass{group: GroupFindWork, frame: "runtime.findRunnable"}, schedN, schedN)
		return acc.result("trace", "samples", 8)
	}
	cases := []struct {
		cpu  CPU
		want FindingKind
		none bool
	}{
		{CPU{}, FindNoSamples, false},
		{sched(20, 10), FindFewSamples, false},
		{sched(200, 60), FindSchedOverhead, false},
		{sched(200, 20), FindSchedOverhead, true}, // exactly 10 %: not over
	}
	for _, c := range cases {
		r := &Report{CPU: c.cpu, Thresholds: DefaultThresholds}
		fs := r.Findings()
		got := len(fs) > 0 && fs[0].Kind == c.want
		if got == c.none {
			t.Errorf("%d samples, %.0f %% scheduler: findings %v, want %v (absent: %v)", c.cpu.Samples, 100*c.cpu.Share(ClassScheduler), fs, c.want, c.none)
		}
	}
	r := &Report{CPU: sched(200, 60), Thresholds: DefaultThresholds}
	f := r.Findings()[0]
	if !strings.Contains(f.Error(), "30 %") || !strings.Contains(f.Error(), "find work 30 %") || len(f.Options) < 3 {
		t.Errorf("finding text: %s", f.Error())
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.Frames != DefaultFrames || o.Thresholds != DefaultThresholds || o.Top != DefaultOptions.Top || len(o.Rules.Infra) == 0 {
		t.Errorf("zero options: %+v", o)
	}
	o = Options{Thresholds: Thresholds{SchedShare: 0.2}}.withDefaults()
	if o.Thresholds.SchedShare != 0.2 || o.Thresholds.MinBurst != DefaultThresholds.MinBurst {
		t.Errorf("partial thresholds: %+v", o.Thresholds)
	}
}
