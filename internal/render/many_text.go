package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/latscope/latscope/internal/termsafe"
)

// WriteJSON writes the aggregate as indented JSON (schema: docs/json.md,
// "Many traces").
func (m *Many) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// WriteText writes the aggregate for a terminal: per request type the
// latencies over every trace, a row per instance and the budget; then
// each trace with its own findings.
func (m *Many) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	var total Duration
	for _, t := range m.Traces {
		total += t.Duration
	}
	ew.printf("latscope: %d traces from %d instances (%s) — %.0f ms of trace in all\n",
		len(m.Traces), len(m.Instances), strings.Join(m.Instances, ", "), total.Ms())
	if len(m.Groups) == 0 {
		ew.printf("\nno requests in any trace\n")
	}
	for i := range m.Groups {
		m.writeGroup(ew, &m.Groups[i])
	}
	ew.printf("\ntraces (each analysed alone; predictions and the CPU cross-check are per trace):\n")
	for _, t := range m.Traces {
		from := ""
		if t.InstanceFrom == "file" {
			from = " (by file name)"
		}
		ew.printf("  %s%s  %s  %.0f ms  %d requests\n", t.Instance, from, t.File, t.Duration.Ms(), t.Requests)
		for _, f := range t.Findings {
			if f.Refuse {
				ew.printf("    - refused: %s\n", f.Text)
			} else {
				ew.printf("    - %s\n", f.Text)
			}
		}
	}
	if len(m.Findings) > 0 {
		ew.printf("\nfindings:\n")
		for _, f := range m.Findings {
			ew.printf("  - %s\n", f.Text)
		}
	}
	return ew.err
}

func (m *Many) writeGroup(ew *errWriter, g *ManyGroup) {
	q := g.Requests
	ew.printf("\n%s: %d requests over %d instances (%d cut by a window, excluded)\n", g.Name, q.Count, len(g.Instances), q.Excluded)
	if q.Count == 0 {
		return
	}
	est := ""
	if q.Estimated {
		est = fmt.Sprintf(" (percentiles estimated, within %.1f %%)", 100*EstimateRelErr)
	}
	ew.printf("latency ms: mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f%s\n", q.Mean.Ms(), q.P50.Ms(), q.P90.Ms(), q.P99.Ms(), q.Max.Ms(), est)
	ew.printf("\nper instance\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	termsafe.Fprintf(tw, "instance\ttraces\trequests\tmean ms\tp99 ms\tmax ms\t  top term (critical ms per request)\t\n")
	for _, r := range g.Instances {
		top := "-"
		if r.TopTerm != "" {
			top = fmt.Sprintf("%s %.2f", r.TopTerm, r.TopCritical.Ms())
		}
		termsafe.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t  %s\t\n", r.Instance, r.Traces, r.Requests, r.Mean.Ms(), r.P99.Ms(), r.Max.Ms(), top)
	}
	tw.Flush()
	m.writeTerms(ew, g)
}

// writeTerms prints the budget over every instance, small terms folded.
func (m *Many) writeTerms(ew *errWriter, g *ManyGroup) {
	ew.printf("\nper request, ms, all instances  goroutine time = wait sum; critical = on the critical path\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	termsafe.Fprintf(tw, "term\tmechanism\tkind\twait\tshare\tcritical\tfix\trequests\t\n")
	var folded Term
	nFolded := 0
	for _, t := range (&Group{Terms: g.Terms, CPUTerms: g.CPUTerms}).BudgetTerms() {
		if t.SharePct < m.minShare && t.CriticalPct < m.minShare {
			folded.Wait += t.Wait
			folded.Critical += t.Critical
			folded.SharePct += t.SharePct
			nFolded++
			continue
		}
		termsafe.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.1f%%\t%.2f\t%.2f\t%d/%d\t\n", nameOr(t.Name, termName(t.Frame)), mechanismOf(t), t.Kind,
			t.Wait.Ms(), t.SharePct, t.Critical.Ms(), t.FixPotential.Ms(), t.Requests, g.Requests.Count)
	}
	if nFolded > 0 {
		termsafe.Fprintf(tw, "%s\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", fmt.Sprintf("(%d smaller terms)", nFolded), folded.Wait.Ms(), folded.SharePct, folded.Critical.Ms())
	}
	c, mean := g.CPU, g.Requests.Mean.Ms()
	if bf := c.ByFrame; bf != nil && len(g.CPUTerms) > 0 {
		termsafe.Fprintf(tw, "running, no frame found\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", bf.Unattributed.Ms(), pct(bf.Unattributed.Ms(), mean), bf.CriticalUnattributed.Ms())
	} else {
		termsafe.Fprintf(tw, "running (on CPU as Go sees it)\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", c.Running.Ms(), pct(c.Running.Ms(), mean), c.CriticalRunning.Ms())
	}
	termsafe.Fprintf(tw, "runnable (scheduler wait)\t\t\t%.2f\t%.1f%%\t%.2f\t\t\t\n", c.Runnable.Ms(), pct(c.Runnable.Ms(), mean), c.CriticalRunnable.Ms())
	tw.Flush()
}
