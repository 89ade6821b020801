// Package dbwaitreport prints the outcome of `latscope dbwait` (a
// dbwait.Result): the text report for people (WriteText, with Evidence and
// Ms, the one line of a statement's evidence and the milliseconds it is
// told in) and the JSON form (JSON, docs/dbwait.md). Package dbwait
// decides the verdicts; this package only formats them.
package dbwaitreport
