// Package htmlreport writes latscope reports as one self-contained HTML
// file: inline CSS and inline SVG generated here, no script, no web fonts,
// nothing fetched (a Content-Security-Policy forbids it), so the file opens
// offline and can be attached to a ticket.
//
// Write renders the analysis of one trace: the budget as bars (goroutine
// time vs critical path per term), the latency distribution, waterfalls of
// the median and the slowest request's critical path across goroutines,
// predictions, the profile disagreement (CPU samples vs wall clock per
// region) and the findings.
//
// Other reports (the lab's) build a Page themselves: NewPage for the header,
// Analysis for the sections above, and their own Sections made of the same
// parts — Table, BarChart, Histogram, Timeline, Waterfall — whose HTML is
// escaped here, so callers never write markup by hand.
package htmlreport
