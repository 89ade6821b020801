package markdown

import "strings"

// Align is a column's alignment, written in the table's delimiter row.
type Align int

const (
	// Default leaves the alignment to the renderer (text, left): "---".
	Default Align = iota
	// Right aligns the column right (figures): "---:".
	Right
)

// Table is a Markdown table: a header row, the delimiter row with each
// column's alignment, and the rows, in the order they were added.
type Table struct {
	header []string
	align  []Align
	rows   [][]string
}

// NewTable is an empty table with the header's cells, every column of
// Default alignment.
func NewTable(header ...string) *Table {
	return &Table{header: header, align: make([]Align, len(header))}
}

// Right aligns the columns cols (0 is the first) right; it panics on a
// column the header does not have.
func (t *Table) Right(cols ...int) *Table {
	for _, c := range cols {
		t.align[c] = Right
	}
	return t
}

// RightFrom aligns column col and every column after it right: a table
// whose first columns name the row and whose others are figures.
func (t *Table) RightFrom(col int) *Table {
	for c := col; c < len(t.align); c++ {
		t.align[c] = Right
	}
	return t
}

// Row adds a row of cells, the first column's first. A row may have more
// or fewer cells than the header: each is written as given.
func (t *Table) Row(cells ...string) {
	t.rows = append(t.rows, cells)
}

// String is the table's Markdown, each row ended by a newline.
func (t *Table) String() string {
	var b strings.Builder
	writeRow(&b, t.header)
	b.WriteString("|")
	for _, a := range t.align {
		if a == Right {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		writeRow(&b, r)
	}
	return b.String()
}

// writeRow writes "| a | b |\n", an empty cell as "| |".
func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		if c != "" {
			b.WriteString(" ")
			b.WriteString(c)
		}
		b.WriteString(" |")
	}
	b.WriteString("\n")
}
