package dbwait

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
	htmlreport "github.com/latscope/latscope/internal/report/html"
	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/lab"
)

// Colours of the series that are not verdicts; a verdict's colour is the
// product's palette's (htmlreport.DBWaitColor), and the host's throttled
// time and steal take the colours of their verdicts.
const (
	colorDB        = "#9aa5b1" // the server's duration: the reference the app's is read against
	colorDBSpan    = "#7d8a96"
	colorAppSpan   = "#1b1f24"
	colorCgroupPSI = "#e4572e"
	colorPSI       = "#5f6b76"
	colorThreshold = "#b3261e"
)

var (
	colorThrottled = htmlreport.DBWaitColor(dbwait.Throttled)
	colorSteal     = htmlreport.DBWaitColor(dbwait.Steal)
)

// maxDrawn is how many statements the page draws at most. Past it (the
// full profile: 3 runs of 60 s) only each condition's first run gets a
// timeline, which keeps the file a few MB.
const maxDrawn = 25000

// page renders the scenario's report as one self-contained HTML file: the
// conditions (the Markdown table's numbers) and the checks, then one
// section per condition with a timeline of each run: every statement's app
// and DB duration and their difference, coloured by verdict, over the
// run's CFS throttling and CPU pressure, with the fault windows shaded.
func page(env *lab.Env, results []*ConditionResult, checks []lab.Check) ([]byte, error) {
	p := &htmlreport.Page{Title: "latscope-lab dbwait — was it the database?",
		Subtitle: fmt.Sprintf("profile %q: %d run(s) per condition, %v windows (%v at least with a fault); a lookup every 20 ms, joined by traceparent with PostgreSQL's own duration; host samples every 100 ms inside the service",
			env.Profile.Name, env.Profile.Runs, env.Profile.Window, MinFaultWindow),
		Footer: "latscope-lab dbwait — app time from the service's execution trace, DB time from PostgreSQL's jsonlog, host counters from the samples logged into the trace (docs/dbwait.md). Hover a dot for its numbers."}
	pass, stmts, over, drawn := 0, 0, 0, 0
	for _, c := range checks {
		if c.OK {
			pass++
		}
	}
	for _, c := range results {
		for _, r := range c.Runs {
			stmts += r.Queries
			over += r.Over
			drawn += len(r.res.Queries)
		}
	}
	p.Facts = []htmlreport.Fact{
		{Name: "checks", Value: fmt.Sprintf("%d of %d passed", pass, len(checks))},
		{Name: "conditions", Value: fmt.Sprint(len(results))},
		{Name: "statements joined", Value: fmt.Sprint(stmts)},
		{Name: "difference > 10 ms", Value: fmt.Sprint(over)},
	}
	secs := []htmlreport.Section{}
	s, err := conditionsSection(results)
	if err != nil {
		return nil, err
	}
	secs = append(secs, s)
	if s, err = checksSection(checks); err != nil {
		return nil, err
	}
	secs = append(secs, s)
	for _, c := range results {
		s, err := conditionSection(c, checks, drawn <= maxDrawn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		secs = append(secs, s)
	}
	p.Add(secs...)
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// conditionsSection is the Markdown report's table; what each condition
// does is the condition's tooltip and its section's title.
func conditionsSection(results []*ConditionResult) (htmlreport.Section, error) {
	t := htmlreport.Table{Class: "compact", Columns: []htmlreport.Column{{Name: "condition"}, {Name: "statements", Num: true},
		{Name: "diff > 10 ms", Num: true}, {Name: "DB p50 ms", Num: true}, {Name: "diff p50 ms", Num: true},
		{Name: "nr_throttled", Num: true, Tip: "CFS periods in which the service's cgroup was throttled"},
		{Name: "cgroup PSI Δ ms", Num: true, Tip: "cgroup PSI some Δ ms: how long some task of the service's v2 cgroup waited for a CPU"},
		{Name: "machine PSI Δ ms", Num: true, Tip: "PSI some Δ ms of the whole machine (/proc/pressure/cpu)"}, {Name: "steal Δ ms", Num: true},
		{Name: "CPU %", Num: true, Tip: "process utime+stime over the window, from /proc/PID/stat"}, {Name: "verdicts", Tip: "of the statements over 10 ms"}}}
	for _, c := range results {
		t.Rows = append(t.Rows, []htmlreport.Cell{{Text: c.Name, Class: "strong", Tip: c.Summary}, {Text: fmt.Sprintf("%g", c.Queries)},
			{Text: fmt.Sprintf("%g", c.Over)}, {Text: fmt.Sprintf("%.3f", c.DBP50Ms)}, {Text: fmt.Sprintf("%.3f", c.DiffP50Ms)},
			{Text: fmt.Sprintf("%g", c.NrThrottled)}, {Text: fmt.Sprintf("%g", c.CgroupPSIMs)}, {Text: fmt.Sprintf("%g", c.PSIMs)},
			{Text: fmt.Sprintf("%g", c.StealMs)}, {Text: fmt.Sprintf("%g", c.CPUPct)}, {Text: verdictText(c.Verdicts)}})
	}
	body, err := t.HTML()
	return htmlreport.Section{ID: "conditions", Title: "Conditions",
		Intro: "difference = app − DB per statement; up to 10 ms the time was inside the DB, above it outside, and host samples classify it. " +
			"Counts and host deltas are means per run; p50s are over all runs' statements; verdicts are summed over runs and count statements over 10 ms.",
		Body: body,
		Note: "Steal cannot be produced on demand on this machine: the VM's steal is an uncontrolled trickle of 10 ms ticks (the steal column), " +
			"which by itself makes no statement \"steal\" (that takes steal per CPU of half the difference and an event-free stretch in the trace as long); " +
			"the steal rule is tested on recorded samples with steal added (dbwait's TestStealOnRecordedSamples)."}, err
}

// checksSection lists the checks.
func checksSection(checks []lab.Check) (htmlreport.Section, error) {
	t := lab.ChecksTable(checks)
	body, err := t.HTML()
	return htmlreport.Section{ID: "checks", Title: "Checks", Intro: "Tolerances come from the method, not from tuning (docs/dbwait.md).", Body: body}, err
}

// conditionSection is one condition: its checks, a timeline per run (only
// the first when !all), and its slowest statements outside the DB.
func conditionSection(c *ConditionResult, checks []lab.Check, all bool) (htmlreport.Section, error) {
	var b strings.Builder
	for _, ck := range checks {
		if !strings.HasPrefix(ck.Name, c.Name) {
			continue
		}
		badge, class := "pass", "badge ok"
		if !ck.OK {
			badge, class = "fail", "badge refuse"
		}
		fmt.Fprintf(&b, `<p class="lead"><span class="%s">%s</span> <strong>%s</strong> — %s</p>`, class, badge, esc(ck.Name), esc(ck.Got))
	}
	for i, rr := range c.Runs {
		if i > 0 && !all {
			fmt.Fprintf(&b, `<p class="note">%d more run(s) not drawn: the page stops drawing past %d statements. Their traces and server logs are in the output folder.</p>`, len(c.Runs)-1, maxDrawn)
			break
		}
		if len(c.Runs) > 1 {
			fmt.Fprintf(&b, "<h3>%s</h3>", esc(rr.Run))
		}
		svg, notes := runTimeline(rr)
		b.WriteString(string(svg))
		notes = append(notes, fmt.Sprintf("Trace %s, server log %s: latscope dbwait --pglog %[2]s %[1]s re-derives every statement.", rr.Trace, rr.PGLog))
		for _, n := range notes {
			fmt.Fprintf(&b, `<p class="note">%s</p>`, esc(n))
		}
	}
	if rows := slowest(c, 3); len(rows) > 0 {
		t := htmlreport.Table{Caption: "Slowest statements outside the DB", Class: "compact", Columns: []htmlreport.Column{
			{Name: "at s", Num: true, Tip: "span start, seconds since the trace began"}, {Name: "app ms", Num: true}, {Name: "DB ms", Num: true},
			{Name: "diff ms", Num: true}, {Name: "verdict", Num: true}, {Name: "confidence", Tip: "high: two instruments agree; medium: one decided; low: counters over a longer interval, or causes ruled out"},
			{Name: "rule", Tip: "the rule that decided the verdict, with its numbers"}, {Name: "evidence"}}}
		if len(c.Runs) > 1 {
			t.Columns = append([]htmlreport.Column{{Name: "run"}}, t.Columns...)
		}
		for _, r := range rows {
			row := []htmlreport.Cell{{Text: fmt.Sprintf("%.3f", r.AtMs/1000)}, {Text: fmt.Sprintf("%.1f", r.AppMs)},
				{Text: fmt.Sprintf("%.2f", r.DBMs)}, {Text: fmt.Sprintf("%.1f", r.DiffMs)}, {Text: r.Verdict, Class: "swatch", Color: verdictColor(r.Verdict)},
				{Text: r.Confidence}, {Text: r.Rule}, {Text: r.Evidence}}
			if len(c.Runs) > 1 {
				row = append([]htmlreport.Cell{{Text: r.run}}, row...)
			}
			t.Rows = append(t.Rows, row)
		}
		h, err := t.HTML()
		if err != nil {
			return htmlreport.Section{}, err
		}
		b.WriteString(string(h))
	}
	return htmlreport.Section{ID: c.Name, Title: c.Name + ": " + c.Summary, Intro: conditionIntro(c),
		Body: template.HTML(b.String())}, nil // every piece escaped above or built by htmlreport
}

// conditionIntro says the condition's numbers in a sentence.
func conditionIntro(c *ConditionResult) string {
	per := ""
	if len(c.Runs) > 1 {
		per = " per run"
	}
	v := verdictText(c.Verdicts)
	if v == "—" {
		v = "none"
	}
	return fmt.Sprintf("%g statements%s, %g with a difference over 10 ms (verdicts: %s); DB p50 %.3f ms, difference p50 %.3f ms; "+
		"nr_throttled %g, cgroup PSI some +%g ms, machine PSI some +%g ms, steal +%g ms, CPU %g %%.",
		c.Queries, per, c.Over, v, c.DBP50Ms, c.DiffP50Ms, c.NrThrottled, c.CgroupPSIMs, c.PSIMs, c.StealMs, c.CPUPct)
}

// runTimeline draws one run: app and DB duration per statement, their
// difference against the threshold, CFS throttling and CPU pressure per
// host sample interval, and the fault windows as bands. The notes say what
// could not be drawn and why.
func runTimeline(rr *RunResult) (template.HTML, []string) {
	res := rr.res
	t0 := res.TraceStart
	sec := func(t tracein.Time) float64 { return t.Sub(t0).Seconds() }
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var notes []string
	lo, hi := 0.0, 0.0
	db := htmlreport.Line{Name: "DB", Color: colorDB, Style: htmlreport.StylePoints}
	var app, diff [dbwait.NumVerdicts][]htmlreport.Point
	for _, q := range res.Queries {
		x := sec(q.Start)
		lo, hi = math.Min(lo, x), math.Max(hi, sec(q.End))
		db.Points = append(db.Points, htmlreport.Point{X: x, Y: ms(q.DB)})
		app[q.Verdict] = append(app[q.Verdict], htmlreport.Point{X: x, Y: ms(q.App)})
		diff[q.Verdict] = append(diff[q.Verdict], htmlreport.Point{X: x, Y: ms(q.Outside)})
	}
	for _, s := range rr.samples {
		lo, hi = math.Min(lo, sec(tracein.Time(s.Mono))), math.Max(hi, sec(tracein.Time(s.Mono)))
	}
	durations := htmlreport.Panel{Title: "app and DB duration per statement, log scale", Unit: "ms", LogY: true, Height: 150, Lines: []htmlreport.Line{db}}
	if spans := longSpans(res, sec, math.Max(minSpan.Seconds(), (hi-lo)/300)); len(spans) > 0 {
		durations.Lines = append(durations.Lines, spans...)
	}
	thr := ms(res.Options.Threshold)
	differences := htmlreport.Panel{Title: "difference app − DB per statement, log scale", Unit: "ms", LogY: true, Height: 130,
		Marks: []htmlreport.Mark{{Value: thr, Label: fmt.Sprintf("%g ms: above, outside the DB", thr), Color: colorThreshold}}}
	for v := range dbwait.NumVerdicts {
		if len(app[v]) == 0 {
			continue
		}
		durations.Lines = append(durations.Lines, htmlreport.Line{Name: "app · " + v.String(), Color: htmlreport.DBWaitColor(v), Style: htmlreport.StylePoints, Points: app[v]})
		differences.Lines = append(differences.Lines, htmlreport.Line{Name: v.String(), Color: htmlreport.DBWaitColor(v), Style: htmlreport.StylePoints, Points: diff[v]})
	}
	if res.Summary.Over == 0 { // a decade of room above the threshold shows that nothing crossed it
		differences.YMax = 10 * thr
	}
	if n := len(res.Unmatched); n > 0 {
		notes = append(notes, fmt.Sprintf("%d DB span(s) whose traceparent is not in the server log are not drawn.", n))
	}
	panels := []htmlreport.Panel{durations, differences}
	host, hostNotes := hostPanels(rr.samples, sec, rr.NrThrottled)
	panels = append(panels, host...)
	notes = append(notes, hostNotes...)
	var bands []htmlreport.Band
	for _, f := range rr.Faults {
		bands = append(bands, htmlreport.Band{From: f.FromMs / 1000, To: f.ToMs / 1000, Label: f.What, Color: bandColor(f.What)})
	}
	tl := htmlreport.Timeline{Label: rr.Run + ": app vs DB duration, throttling and CPU pressure", XLabel: "seconds since the run's trace began",
		XMin: lo, XMax: hi, Bands: bands, Panels: panels}
	return tl.SVG(), notes
}

// minSpan is the shortest statement drawn as a span as well as a dot: the
// long waits (the lock, the pause), not the many short ones whose lines
// would hide their dots' verdict colours.
const minSpan = 100 * time.Millisecond

// longSpans draws the statements that last at least min seconds as
// lines from start to end at the height of their duration: the app's span
// on the trace clock and, when the clocks place it, the statement inside
// the DB (PostgreSQL's end minus its duration). The gap between the two
// lines' ends is the time outside the DB.
func longSpans(res *dbwait.Result, sec func(tracein.Time) float64, min float64) []htmlreport.Line {
	app := htmlreport.Line{Name: "app: start → end", Color: colorAppSpan}
	db := htmlreport.Line{Name: "DB: start → end", Color: colorDBSpan}
	gap := math.NaN()
	for _, q := range res.Queries {
		from, to := sec(q.Start), sec(q.End)
		if to-from < min {
			continue
		}
		y := float64(q.App) / float64(time.Millisecond)
		app.Points = append(app.Points, htmlreport.Point{X: from, Y: y}, htmlreport.Point{X: to, Y: y}, htmlreport.Point{X: to, Y: gap})
		if q.DBStart.IsZero() || res.TraceStartWall.IsZero() {
			continue
		}
		y = float64(q.DB) / float64(time.Millisecond)
		from, to = q.DBStart.Sub(res.TraceStartWall).Seconds(), q.DBEnd.Sub(res.TraceStartWall).Seconds()
		db.Points = append(db.Points, htmlreport.Point{X: from, Y: y}, htmlreport.Point{X: to, Y: y}, htmlreport.Point{X: to, Y: gap})
	}
	var out []htmlreport.Line
	for _, l := range []htmlreport.Line{db, app} {
		if len(l.Points) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// hostPanels draws the throttling and pressure tracks from consecutive
// host samples: each counter's increment over a sample interval, divided
// by the interval (ms per s), held over it. An interval in which a source
// is absent is a gap, and a source absent throughout is named in a note
// instead of drawn.
func hostPanels(samples []hostsig.Sample, sec func(tracein.Time) float64, nrThrottled uint64) ([]htmlreport.Panel, []string) {
	if len(samples) < 2 {
		return nil, []string{fmt.Sprintf("No throttling or pressure tracks: the trace carries %d host sample(s) (%s logs), and a track needs two.", len(samples), hostsig.LogCategory)}
	}
	type track struct {
		name, color string
		src         hostsig.Source
		val         func(hostsig.Delta) time.Duration
		pts         []htmlreport.Point
		absent      int
		why         string
	}
	tracks := []*track{
		{name: "throttled time", color: colorThrottled, src: hostsig.SourceThrottle, val: func(d hostsig.Delta) time.Duration { return d.ThrottledTime }},
		{name: "cgroup PSI some", color: colorCgroupPSI, src: hostsig.SourceCgroupPSI, val: func(d hostsig.Delta) time.Duration { return d.CgroupSome }},
		{name: "machine PSI some", color: colorPSI, src: hostsig.SourceSystemPSI, val: func(d hostsig.Delta) time.Duration { return d.SystemSome }},
		{name: "steal", color: colorSteal, src: hostsig.SourceSteal, val: func(d hostsig.Delta) time.Duration { return d.Steal }},
	}
	n := len(samples) - 1
	for i := range n {
		d := hostsig.Diff(samples[i], samples[i+1])
		x := sec(tracein.Time(samples[i].Mono))
		for _, t := range tracks {
			y := math.NaN()
			if d.Has(t.src) && d.Interval > 0 {
				y = float64(t.val(d)) / float64(time.Millisecond) / d.Interval.Seconds()
			} else {
				t.absent++
				if t.why == "" {
					t.why = d.Absent[t.src]
				}
			}
			t.pts = append(t.pts, htmlreport.Point{X: x, Y: y})
		}
	}
	var notes []string
	line := func(t *track, style htmlreport.Style) (htmlreport.Line, bool) {
		switch {
		case t.absent == n:
			notes = append(notes, fmt.Sprintf("No %s track: absent in every sample interval (%s).", t.name, t.why))
			return htmlreport.Line{}, false
		case t.absent > 0:
			notes = append(notes, fmt.Sprintf("%s absent in %d of %d sample intervals (%s): gaps in its track.", t.name, t.absent, n, t.why))
		}
		end := htmlreport.Point{X: sec(tracein.Time(samples[n].Mono)), Y: math.NaN()} // the last interval ends here
		return htmlreport.Line{Name: t.name, Color: t.color, Style: style, Points: append(t.pts, end)}, true
	}
	var panels []htmlreport.Panel
	if l, ok := line(tracks[0], htmlreport.StyleArea); ok {
		panels = append(panels, htmlreport.Panel{Title: fmt.Sprintf("CFS throttling of the service's cgroup: nr_throttled +%d over the trace", nrThrottled),
			Unit: "ms throttled per s", Height: 70, Lines: []htmlreport.Line{l}})
	}
	pressure := htmlreport.Panel{Title: "CPU pressure (PSI some) and steal", Unit: "ms per s", Height: 80}
	for _, t := range tracks[1:] {
		if l, ok := line(t, htmlreport.StyleStep); ok {
			pressure.Lines = append(pressure.Lines, l)
		}
	}
	if len(pressure.Lines) > 0 {
		panels = append(panels, pressure)
	}
	return panels, notes
}

// bandColor shades a fault by its kind.
func bandColor(what string) string {
	switch {
	case strings.HasPrefix(what, "SIGSTOP"):
		return "#9b6fd6"
	case strings.HasPrefix(what, "CFS quota"):
		return "#f3a5a7"
	case strings.HasPrefix(what, "proxy"):
		return "#8fb8e6"
	}
	return "" // the timeline's amber: the table lock
}

// verdictColor returns the colour of a verdict by name.
func verdictColor(name string) string {
	var v dbwait.Verdict
	if v.UnmarshalText([]byte(name)) != nil {
		return htmlreport.KindColor("unknown")
	}
	return htmlreport.DBWaitColor(v)
}

func esc(s string) string { return template.HTMLEscapeString(s) }
