package budget

import (
	"fmt"
	"math"
	"strings"
)

// Wording is what the findings written once for both runtimes (warm-up,
// a prediction that matches no term) say differently for a Go trace and
// a JVM recording. The Go trace's is budget's own; internal/jfr keeps the
// JVM's.
type Wording struct {
	Input        string // what was recorded: "the window", "the recording"
	WarmupCauses string // what warm-up is on this runtime, or ""
	Restart      string // how to record past warm-up
	TermsOf      string // after "matches no term": whose terms, or ""
	ClosestLead  string // before the closest names, joined with ", "
	ClosestTail  string // after them
}

// goWording is a Go execution trace's.
var goWording = Wording{
	Input:       "the window",
	Restart:     "start the trace after warm-up",
	ClosestLead: " (closest: ",
	ClosestTail: ")",
}

// WarmupText is the warm-up finding's text: group's first k requests (by
// start) averaged first ns against rest ns for the others.
func (w Wording) WarmupText(group string, k int, first, rest float64) string {
	return fmt.Sprintf("%s: the first %d requests averaged %.1f ms against %.1f ms for the rest: %s seems to include warm-up%s; %s",
		group, k, first/1e6, rest/1e6, w.Input, w.causes(), w.Restart)
}

// WarmupFinding is the warm-up check's finding for group, nil when it
// says nothing: warm-up when the ratio's whole 95 % interval lies above
// WarmupRatio (WarmupText and the interval), warm-up-inconclusive when
// the interval contains it or when there are too few requests to judge.
func (w Wording) WarmupFinding(group string, j Warmup) *Finding {
	first, rest := j.First.Value, j.Rest.Value
	switch j.Verdict {
	case WarmupFires:
		return &Finding{Kind: FindWarmup, Group: group, Text: w.WarmupText(group, j.Head, first, rest) +
			fmt.Sprintf("; their ratio is %.2f× (95 %% interval %.2f–%.2f×, all of it above the %.1f× bar; docs/method.md §6)", j.Ratio.Value, j.Low, j.High, WarmupRatio)}
	case WarmupInconclusive:
		text := fmt.Sprintf("%s: the first %d requests averaged %.1f ms against %.1f ms for the rest, %.2f× (95 %% interval %.2f–%.2f×, which contains the %.1f× bar; docs/method.md §6): whether %s includes warm-up%s is inconclusive; ",
			group, j.Head, first/1e6, rest/1e6, j.Ratio.Value, j.Low, j.High, WarmupRatio, w.Input, w.causes())
		if f := j.moreRequests(); f > 0 {
			text += fmt.Sprintf("about %s× as many requests would decide it, or ", timesWords(f))
		}
		return &Finding{Kind: FindWarmupInconclusive, Group: group, Text: text + w.Restart}
	case WarmupTooFew:
		return &Finding{Kind: FindWarmupInconclusive, Group: group, Text: fmt.Sprintf(
			"%s: the first %d of only %d requests averaged %.1f ms against %.1f ms for the rest (%.2f×): too few to judge warm-up, which needs at least %d requests (a first tenth of at least %d, for a batch-means interval of their mean with 3 degrees of freedom; docs/method.md §6); whether %s includes warm-up%s is inconclusive; %s",
			group, j.Head, j.N, first/1e6, rest/1e6, j.Ratio.Value, MinWarmupRequests, MinWarmupRequests/10, w.Input, w.causes(), w.Restart)}
	}
	return nil
}

func (w Wording) causes() string {
	if w.WarmupCauses == "" {
		return ""
	}
	return " (" + w.WarmupCauses + ")"
}

// timesWords is a factor as "3.2" under 10, "40" above.
func timesWords(f float64) string {
	if f < 10 {
		return fmt.Sprintf("%.1f", math.Ceil(10*f)/10)
	}
	return fmt.Sprintf("%.0f", math.Ceil(f))
}

// NoMatchText is the no-match finding's text for a prediction spec that
// matches no term, with the closest names (as they are to be shown) when
// there are any.
func (w Wording) NoMatchText(spec string, closest []string) string {
	hint := ""
	if len(closest) > 0 {
		hint = w.ClosestLead + strings.Join(closest, ", ") + w.ClosestTail
	}
	return fmt.Sprintf("prediction %q matches no term%s%s", spec, w.TermsOf, hint)
}
