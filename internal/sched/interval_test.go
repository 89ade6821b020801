package sched

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/tracein"
)

// traceCPU builds a trace's CPU shares from samples in time order; sched
// says which are the scheduler's.
func traceCPU(sched []bool) CPU {
	acc := newCPUAcc(DefaultFrames, &DefaultOptions.Rules)
	for i, s := range sched {
		sc := sampleClass{group: GroupNone}
		if s {
			sc = sampleClass{group: GroupFindWork, frame: "runtime.findRunnable"}
		}
		acc.addAt(sc, tracein.Time(i))
	}
	c := acc.result("trace", "samples", 8)
	c.setInterval(designOf(acc.seq), DefaultThresholds.MinSamples)
	return c
}

// series returns n samples of which every k-th run of run samples is the
// scheduler's: n/k·… a share of 1/k in runs of run.
func series(n, run, k int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = (i/run)%k == 0
	}
	return out
}

// TestSchedShareInterval: the case, a 19 % share on ~50 samples
// against the 10 % bar. Spread evenly (independent-looking) the interval
// clears the bar and the finding fires; the same share in bursts of 5
// samples in a row is fewer independent observations, the interval
// reaches below the bar, and the finding says inconclusive instead.
func TestSchedShareInterval(t *testing.T) {
	judge := func(c CPU) (FindingKind, string, bool) {
		r := &Report{CPU: c, Thresholds: DefaultThresholds}
		for _, f := range r.Findings() {
			if f.Kind == FindSchedOverhead || f.Kind == FindSchedInconclusive {
				return f.Kind, f.Text, true
			}
		}
		return 0, "", false
	}
	// one in five: 20 % of 200 samples, every fifth sample
	even := traceCPU(series(200, 1, 5))
	if iv := even.Interval; iv == nil || iv.DesignEffect > 1.2 || iv.Low <= 0.10 {
		t.Fatalf("even samples: interval %+v, want design effect ≈ 1 and a low bound over 10 %%", iv)
	}
	if k, text, ok := judge(even); !ok || k != FindSchedOverhead || !strings.Contains(text, "95 % interval") {
		t.Errorf("even samples: %v %q, want sched-overhead with its interval", k, text)
	}
	// the same 20 % in bursts of 10 samples
	bursty := traceCPU(series(200, 10, 5))
	iv := bursty.Interval
	if iv == nil || iv.DesignEffect < 3 || iv.DesignFrom != "trace" || iv.Low > 0.10 || iv.High < 0.2 {
		t.Fatalf("bursty samples: interval %+v, want a design effect of several and a low bound under 10 %%", iv)
	}
	k, text, ok := judge(bursty)
	if !ok || k != FindSchedInconclusive || !strings.Contains(text, "inconclusive") || !strings.Contains(text, "effective") || !strings.Contains(text, "as many samples would decide it") {
		t.Errorf("bursty samples: %v %q, want sched-overhead-inconclusive", k, text)
	}
	t.Logf("even: %.1f–%.1f %%; bursty: %.1f–%.1f %% (design effect %.1f): %s", 100*even.Interval.Low, 100*even.Interval.High, 100*iv.Low, 100*iv.High, iv.DesignEffect, text)
	// a low share whose interval stays under the bar: nothing
	low := traceCPU(series(2000, 1, 50))
	if k, text, ok := judge(low); ok {
		t.Errorf("2 %% of 2000: %v %q, want no finding", k, text)
	}
	if FindSchedInconclusive.String() != "sched-overhead-inconclusive" {
		t.Errorf("kind name %q", FindSchedInconclusive)
	}
}
