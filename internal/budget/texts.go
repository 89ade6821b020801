package budget

import (
	"fmt"
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
	causes := ""
	if w.WarmupCauses != "" {
		causes = " (" + w.WarmupCauses + ")"
	}
	return fmt.Sprintf("%s: the first %d requests averaged %.1f ms against %.1f ms for the rest: %s seems to include warm-up%s; %s",
		group, k, first/1e6, rest/1e6, w.Input, causes, w.Restart)
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
