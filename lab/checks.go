package lab

import (
	"fmt"
	"strings"
	"time"

	htmlreport "github.com/latscope/latscope/internal/report/html"
)

// ChecksTable is the checks as an HTML table for a scenario's report: each
// check's name, what it wants, what the run got, and pass or FAIL.
func ChecksTable(checks []Check) htmlreport.Table {
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

// Report is the scenario's Markdown report: a title line (the command, when
// it ran, how long it took, where its files are, and the CPU burners that
// loaded the host), the scenario's own text, and the checks as a table.
func (out *Outcome) Report(scenario, dir string, took time.Duration, now time.Time, burners int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n`latscope lab %s` — %s, took %s. Files in `%s`.\n\n", out.Title, scenario, now.UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second), dir)
	if burners > 0 {
		fmt.Fprintf(&b, "**Loaded host:** %d CPU burner(s), one per core, spun beside the scenario for its whole run (`--loaded`).\n\n", burners)
	}
	b.WriteString(out.Markdown)
	pass := len(out.Checks) - len(out.Failed())
	fmt.Fprintf(&b, "\n## Checks (%d of %d passed)\n\n| check | want | got | |\n|---|---|---|---|\n", pass, len(out.Checks))
	for _, c := range out.Checks {
		mark := "pass"
		if !c.OK {
			mark = "**FAIL**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Name, c.Want, c.Got, mark)
	}
	return b.String()
}
