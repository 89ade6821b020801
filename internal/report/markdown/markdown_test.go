package markdown

import "testing"

// TestTable checks the exact bytes: the header, the delimiter row with
// each column's alignment, rows as given (an empty cell "| |", a short
// row as short), no escaping.
func TestTable(t *testing.T) {
	tb := NewTable("mode", "rps", "mean ms", "")
	tb.RightFrom(1)
	tb.Row("serial", "12.5", "80.00", "pass")
	tb.Row("", "1", "2", "**FAIL**")
	tb.Row("other waits", "", "")
	tb.Row()
	want := "| mode | rps | mean ms | |\n" +
		"|---|---:|---:|---:|\n" +
		"| serial | 12.5 | 80.00 | pass |\n" +
		"| | 1 | 2 | **FAIL** |\n" +
		"| other waits | | |\n" +
		"|\n"
	if got := tb.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestAlign: Right sets the named columns, RightFrom the rest from one;
// a table with no rows is its header and delimiter.
func TestAlign(t *testing.T) {
	for _, c := range []struct {
		tb   *Table
		want string
	}{
		{NewTable("a", "b"), "| a | b |\n|---|---|\n"},
		{NewTable("a", "b", "c").Right(0, 2), "| a | b | c |\n|---:|---|---:|\n"},
		{NewTable("a", "b", "c").RightFrom(2), "| a | b | c |\n|---|---|---:|\n"},
		{NewTable("a").RightFrom(3), "| a |\n|---|\n"},
		{NewTable(), "|\n|\n"},
	} {
		if got := c.tb.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// TestText checks Bold and Bullets byte for byte.
func TestText(t *testing.T) {
	if got, want := Bold("FAIL"), "**FAIL**"; got != want {
		t.Errorf("Bold: %q, want %q", got, want)
	}
	if got, want := Bullets("a", "b: c"), "- a\n- b: c\n"; got != want {
		t.Errorf("Bullets: %q, want %q", got, want)
	}
	if got := Bullets(); got != "" {
		t.Errorf("Bullets(): %q, want none", got)
	}
}
