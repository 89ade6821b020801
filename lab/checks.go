package lab

import (
	"fmt"
	"strings"
	"time"

	htmlreport "github.com/latscope/latscope/internal/report/html"
	"github.com/latscope/latscope/internal/report/markdown"
)

// ChecksTable is the checks as an HTML table for a scenario's report: each
// check's name, what it wants, what the run got, and pass or FAIL; with
// three-way verdicts (Estimated) also the 95 % interval, and pass,
// inconclusive or FAIL.
func ChecksTable(checks []Check) htmlreport.Table {
	if !judged(checks) {
		t := htmlreport.Table{Columns: []htmlreport.Column{{Name: "check"}, {Name: "want"}, {Name: "got", Num: true}, {Name: ""}}}
		for _, c := range checks {
			mark, class := "pass", "good"
			if !c.OK {
				mark, class = "FAIL", "bad"
			}
			t.Rows = append(t.Rows, []htmlreport.Cell{{Text: c.Name}, {Text: c.Want}, {Text: c.Got}, {Text: mark, Class: class}})
		}
		return t
	}
	t := htmlreport.Table{Caption: headline(checks) + ". " + strings.ReplaceAll(VerdictRule, "**", ""),
		Columns: []htmlreport.Column{{Name: "check"}, {Name: "want"}, {Name: "got", Num: true},
			{Name: "95 % interval", Num: true, Tip: "the interval of the estimate the check judges; exact: a structural check"}, {Name: "verdict"}}}
	for _, c := range checks {
		mark, class := "pass", "good"
		switch c.Status() {
		case Fail:
			mark, class = "FAIL", "bad"
		case Inconclusive:
			mark, class = "inconclusive", "inconclusive"
		}
		t.Rows = append(t.Rows, []htmlreport.Cell{{Text: c.Name, Tip: c.Method}, {Text: c.Want}, {Text: c.Got}, {Text: c.Interval(), Tip: c.Method}, {Text: mark, Class: class}})
	}
	return t
}

// Report is the scenario's Markdown report: a title line (the command, when
// it ran, how long it took, where its files are, and the CPU burners that
// loaded the host), the scenario's own text, and the checks as a table.
func (out *Outcome) Report(scenario, dir string, took time.Duration, now time.Time, burners int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n`latscope-lab %s` — %s, took %s. Files in `%s`.\n\n", out.Title, scenario, now.UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second), dir)
	if burners > 0 {
		fmt.Fprintf(&b, "**Loaded host:** %d CPU burner(s), one per core, spun beside the scenario for its whole run (`--loaded`).\n\n", burners)
	}
	b.WriteString(out.Markdown)
	if !judged(out.Checks) {
		pass := len(out.Checks) - len(out.Failed())
		fmt.Fprintf(&b, "\n## Checks (%d of %d passed)\n\n", pass, len(out.Checks))
		t := markdown.NewTable("check", "want", "got", "")
		for _, c := range out.Checks {
			mark := "pass"
			if !c.OK {
				mark = markdown.Bold("FAIL")
			}
			t.Row(c.Name, c.Want, c.Got, mark)
		}
		b.WriteString(t.String())
		return b.String()
	}
	fmt.Fprintf(&b, "\n## Checks (%s)\n\n%s\n\n", headline(out.Checks), VerdictRule)
	if w := inconclusiveWords(out.Checks); w != "" {
		fmt.Fprintf(&b, "Inconclusive (the samples allow both): %s.\n\n", w)
	}
	t := markdown.NewTable("check", "want", "got", "95 % interval", "verdict")
	for _, c := range out.Checks {
		mark := c.Status()
		switch mark {
		case Fail:
			mark = markdown.Bold("FAIL")
		case Inconclusive:
			mark = "*inconclusive*"
		}
		t.Row(c.Name, c.Want, c.Got, c.Interval(), mark)
	}
	b.WriteString(t.String())
	if m := methods(out.Checks); len(m) > 0 {
		b.WriteString("\nHow the intervals were computed:\n\n")
		b.WriteString(markdown.Bullets(m...))
	}
	return b.String()
}

// headline is "9 of 10 passed, 1 inconclusive" (and ", N failed").
func headline(checks []Check) string {
	n := map[string]int{}
	for _, c := range checks {
		n[c.Status()]++
	}
	s := fmt.Sprintf("%d of %d passed", n[Pass], len(checks))
	if n[Inconclusive] > 0 {
		s += fmt.Sprintf(", %d inconclusive", n[Inconclusive])
	}
	if n[Fail] > 0 {
		s += fmt.Sprintf(", %d failed", n[Fail])
	}
	return s
}

// methods lists the distinct interval methods of the checks, in order.
func methods(checks []Check) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range checks {
		if c.Method != "" && !seen[c.Method] {
			seen[c.Method] = true
			out = append(out, c.Method)
		}
	}
	return out
}
