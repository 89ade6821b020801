package markdown

import "strings"

// Bold is s in bold: "**s**".
func Bold(s string) string { return "**" + s + "**" }

// Bullets is a bullet list of the items, one "- item" line each.
func Bullets(items ...string) string {
	var b strings.Builder
	for _, s := range items {
		b.WriteString("- ")
		b.WriteString(s)
		b.WriteString("\n")
	}
	return b.String()
}
