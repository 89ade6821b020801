package burst

import (
	"fmt"

	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/lab"
)

// checks are the scenario's checks; their tolerances are the rules of
// docs/method.md §9 and docs/sched.md.
func (r *Result) checks() []lab.Check {
	var out []lab.Check
	spawn, fixed := r.variant("spawn"), r.variant("fixed")
	if spawn != nil {
		out = append(out, lab.Check{
			Name: "spawn: the scheduler-overhead finding fires on its trace",
			Want: fmt.Sprintf("scheduler > %.0f %% of CPU", 100*spawn.Trace.Thresholds.SchedShare),
			Got:  shareWords(spawn),
			OK:   fired(spawn.Trace),
		})
	}
	if fixed != nil {
		t := fixed.Trace.Thresholds
		enough := fixed.Trace.CPU.Samples >= t.MinSamples || fixed.Profile.CPU.Samples >= t.MinSamples
		out = append(out, lab.Check{
			Name: "fixed: no scheduler-overhead finding on its trace",
			Want: fmt.Sprintf("scheduler ≤ %.0f %% of CPU, judged on at least %d samples", 100*t.SchedShare, t.MinSamples),
			Got:  shareWords(fixed),
			OK:   !fired(fixed.Trace) && !fired(fixed.Profile) && enough,
		})
	}
	for _, p := range r.Predictions {
		if p.From == "spawn" && p.To == "fixed" {
			out = append(out, savingCheck(p), predictionCheck(p))
		}
	}
	return out
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
