package lab

import htmlreport "github.com/latscope/latscope/report/html"

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
