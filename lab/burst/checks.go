package burst

import (
	"fmt"
	"math"

	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/lab"
)

// checks are the scenario's checks; their tolerances are the rules of
// docs/method.md §9 and docs/sched.md. The scheduler-overhead checks are
// statistical tests (lab.Judged): the scheduler share's 95 % interval
// (Wilson on the effective samples, sched.ShareInterval) against the
// finding's threshold — pass when the interval lies on the right side of
// it, fail when wholly on the wrong side, inconclusive when it contains
// the threshold (as the analyser's own inconclusive finding says).
func (r *Result) checks() []lab.Check {
	var out []lab.Check
	spawn, fixed := r.variant("spawn"), r.variant("fixed")
	if spawn != nil {
		t := spawn.Trace.Thresholds
		c := shareCheck("spawn: the scheduler-overhead finding fires on its trace",
			fmt.Sprintf("scheduler > %.0f %% of CPU (95 %% interval)", 100*t.SchedShare), lab.Over(100*t.SchedShare), spawn.Trace)
		c.Got = shareWords(spawn)
		out = append(out, c)
	}
	if fixed != nil {
		t := fixed.Trace.Thresholds
		band := lab.Under(100 * t.SchedShare)
		tr := shareCheck("", "", band, fixed.Trace)
		pr := shareCheck("", "", band, fixed.Profile)
		c := lab.Check{
			Name:    "fixed: no scheduler-overhead finding on its trace or its profile",
			Want:    fmt.Sprintf("scheduler ≤ %.0f %% of CPU (95 %% interval), judged on at least %d samples", 100*t.SchedShare, t.MinSamples),
			Got:     shareWords(fixed),
			Verdict: lab.Combine(tr.Status(), pr.Status()),
			Low:     tr.Low, High: tr.High, Method: tr.Method,
		}
		c.OK = c.Verdict != lab.Fail
		out = append(out, c)
	}
	for _, p := range r.Predictions {
		if p.From == "spawn" && p.To == "fixed" {
			out = append(out, savingCheck(p), predictionCheck(p))
		}
	}
	return out
}

// shareCheck judges a report's scheduler share (per cent) by its 95 %
// interval against band; without an interval (fewer samples than are
// judged, or no report) the check is inconclusive.
func shareCheck(name, want string, band lab.Band, r *sched.Report) lab.Check {
	lo, hi, value, method := math.NaN(), math.NaN(), math.NaN(), "Wilson interval on the effective samples (sched.ShareInterval)"
	if r != nil {
		value = 100 * r.CPU.Share(sched.ClassScheduler)
		if iv := r.CPU.Interval; iv != nil {
			lo, hi = 100*iv.Low, 100*iv.High
		}
	}
	return lab.Judged(name, want, band, value, lo, hi, method)
}

// savingCheck: the fix must lower CPU per event by more than the counter's
// resolution (one clock tick at each end of both windows).
func savingCheck(p Prediction) lab.Check {
	return lab.Check{
		Name: fmt.Sprintf("%s lowers CPU per event against %s (independent counter)", p.To, p.From),
		Want: fmt.Sprintf("saving > %.1f %% (counter resolution)", 100*p.Resolution),
		Got:  fmt.Sprintf("%.2f → %.2f µs per event: %.0f %% saved", p.FromCPU/1e3, p.MeasuredCPU/1e3, 100*p.MeasuredSaving),
		OK:   p.MeasuredSaving > p.Resolution,
	}
}

// predictionCheck: the scheduler's sampled CPU is a lower bound of what the
// fix saves. The fix removes the scheduler's work; it can save more (the
// allocation and GC of a goroutine per event go too, the work runs on
// fewer, warmer threads, and CPU the profile did not sample may be the
// scheduler's), but not less, within the share's sampling margin and the
// counter's resolution.
func predictionCheck(p Prediction) lab.Check {
	slack := p.Margin*min(p.Coverage, 1) + p.Resolution
	return lab.Check{
		Name: fmt.Sprintf("the scheduler share of %s predicts the saving of %s (lower bound)", p.From, p.To),
		Want: fmt.Sprintf("measured saving ≥ %.0f %% − %.0f (share × coverage − margin − resolution)", 100*p.PredictedLow, 100*slack),
		Got: fmt.Sprintf("predicted %.0f–%.0f %% (share %.0f %% ± %.0f, profile coverage %.0f %%), measured %.0f %%",
			100*p.PredictedLow, 100*p.PredictedHigh, 100*p.Share, 100*p.Margin, 100*p.Coverage, 100*p.MeasuredSaving),
		OK: p.MeasuredSaving >= p.PredictedLow-slack,
	}
}

func shareWords(m *Measurement) string {
	return fmt.Sprintf("%.0f %% in the trace (%d samples), %.0f %% in the profile (%d samples)",
		100*m.Trace.CPU.Share(sched.ClassScheduler), m.Trace.CPU.Samples,
		100*m.Profile.CPU.Share(sched.ClassScheduler), m.Profile.CPU.Samples)
}
