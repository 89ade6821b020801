// Package markdown writes the Markdown of the lab's reports: tables, bold
// text and bullet lists, in the bytes the lab used to write by hand (issue
// 31: one presentation layer that every output goes through). It escapes
// nothing: a cell's text is written as given, so it must hold no `|` and
// no newline.
package markdown
