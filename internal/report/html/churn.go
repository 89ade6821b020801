package htmlreport

import (
	"fmt"
	"strings"

	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/sched"
)

// churnSection is the scheduler-churn analysis of a JVM recording
// (docs/jfr-churn.md), the section the text report prints after the
// budget: the share of the execution samples in pool machinery by group,
// the verdict against the 10 % rule with its interval, and the findings.
func churnSection(c *sched.JVMReport) Section {
	var b body
	b.lead(c.Verdict() + ".")
	if c.Samples > 0 {
		rows := []BarRow{}
		for _, g := range c.Groups {
			rows = append(rows, BarRow{Label: g.Group.String(), Values: []float64{100 * g.Share},
				Tip: fmt.Sprintf("%s: %d of %d execution samples", g.Group, g.Samples, c.Samples)})
		}
		rows = append(rows, BarRow{Label: "other (the work, the JDK's other code)", Values: []float64{100 * (1 - c.Share)},
			Tip: fmt.Sprintf("%d of %d execution samples", c.Samples-c.Machinery, c.Samples)})
		chart := BarChart{Label: "execution samples by pool machinery", Unit: "% of execution samples",
			Series: []Series{{Name: "share of execution samples", Color: colorCPU}}, Rows: rows, Max: 100}
		b.raw(chart.SVG())
	}
	for _, f := range c.Findings() {
		text := f.Text
		if len(f.Options) > 0 {
			text += ". Options: " + strings.Join(f.Options, "; ")
		}
		b.p("", text)
	}
	var detail strings.Builder
	if err := render.WriteChurnText(&detail, c); err == nil {
		b.details("every number of the churn analysis", preHTML(detail.String()))
	}
	return Section{Title: "Scheduler churn", Body: b.html(),
		Intro: "Time a thread pool spends waking, scanning and parking its threads is CPU no request's budget shows. JFR's execution samples say how much of the Java code that ran was ForkJoinPool and thread-pool machinery (a look is due above 10 %, docs/method.md §9); they see only threads running Java code, so the JVM's own park/unpark and the kernel's part are in no sample and the share is a lower bound."}
}
