package htmlreport

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
)

// schedSection is the scheduler-overhead analysis of the same trace (and
// CPU profile), the section the text report prints after the budget: where
// the CPU samples went by class (scheduler, GC, instrumentation, the rest),
// what the trace shows about wakeups and bursts, and the findings with the
// fixes to consider.
func schedSection(s *sched.Report) (Section, bool) {
	if s == nil || s.CPU.Samples == 0 {
		return Section{}, false
	}
	c := &s.CPU
	var rows []BarRow
	for _, cl := range c.Classes {
		tip := fmt.Sprintf("%s: %s of %d CPU samples", cl.Class, fmtPct(100*cl.Share), c.Samples)
		if cl.Class == sched.ClassScheduler {
			tip += fmt.Sprintf(" ± %s", fmtPct(100*c.Margin(sched.ClassScheduler)))
		}
		rows = append(rows, BarRow{Label: cl.Class.String(), Values: []float64{100 * cl.Share}, Tip: tip})
	}
	chart := BarChart{Label: "CPU samples by class", Unit: "% of CPU samples",
		Series: []Series{{Name: "share of CPU samples", Color: colorCPU}}, Rows: rows, Max: 100}
	var b body
	b.lead("From ", fmt.Sprintf("%d CPU samples", c.Samples), fmt.Sprintf(" of the %s: ", c.Source), fmt.Sprintf("%s in the scheduler", fmtPct(100*c.Share(sched.ClassScheduler))), ".")
	b.raw(chart.SVG())
	for _, f := range s.Findings() {
		text := f.Text
		if len(f.Options) > 0 {
			text += ". Options: " + strings.Join(f.Options, "; ")
		}
		b.p("", text)
	}
	var detail strings.Builder
	if err := render.WriteSchedText(&detail, s); err == nil {
		b.details("every number of the scheduler analysis", preHTML(detail.String()))
	}
	return Section{Title: "Scheduler and runtime overhead", Body: b.html(),
		Intro: "Time in the Go scheduler, the garbage collector and the tracer is CPU no request's budget shows: the CPU samples say how much of the process's CPU went there, and the trace how often goroutines were woken and in what bursts (docs/method.md §9)."}, true
}

// preHTML is text in a <pre> block, escaped.
func preHTML(text string) template.HTML {
	return template.HTML("<pre>" + esc(strings.TrimRight(text, "\n")) + "</pre>")
}
