package triagereport

import (
	"strconv"
	"time"

	"github.com/latscope/latscope/internal/triage"
)

// The writers' own formatting. Numbers, names and times that package
// triage also prints in its sentences (the verdict, the reasons, the
// warnings) are formatted by triage's exported helpers (triage.Ms, Sec,
// Names, Dur, Pct, PText, PName, PhaseText, Report.ClockLayout), so they
// read alike in both.

// maxListed is how many bad steps the text lists one by one.
const maxListed = 12

// maxOutbound is how many routes with outbound calls the text lists one
// by one.
const maxOutbound = 3

// who names the job and route.
func who(r *triage.Report) string {
	s := "all jobs"
	if r.Job != "" {
		s = "job=" + strconv.Quote(r.Job)
	}
	if r.Route != "" {
		s += " route=" + strconv.Quote(r.Route)
	}
	return s
}

// spanLayout is the layout of the period test's span: the date when it
// spans days.
func spanLayout(w triage.WhenEvidence) string {
	if w.SpanFrom.UTC().YearDay() != w.SpanTo.UTC().YearDay() {
		return "2006-01-02 15:04:05"
	}
	return "15:04:05"
}

// stallText is the shortest stall of a held step (Report.MinStall) as a
// duration, to the millisecond.
func stallText(r *triage.Report) string {
	return triage.Dur(time.Duration(r.MinStall * float64(time.Second)).Round(time.Millisecond))
}

// indexSet is the set of the step indexes in idx.
func indexSet(idx []int) map[int]bool {
	m := make(map[int]bool, len(idx))
	for _, i := range idx {
		m[i] = true
	}
	return m
}
