package dbwaitreport

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
)

// TextOptions configures WriteText.
type TextOptions struct {
	All bool // list every statement, not only those outside the database
}

// WriteText renders r as the text report of `latscope dbwait`: the counts,
// the host totals, the summary table by verdict, and the statements with
// their verdicts and evidence.
func WriteText(w io.Writer, r *dbwait.Result, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	s := r.Summary
	fmt.Fprintf(bw, "DB spans: %d, %d joined with their statement by traceparent", s.Spans, s.Matched)
	if n := len(r.Unmatched); n > 0 {
		fmt.Fprintf(bw, ", %d not in the statement log", n)
	}
	fmt.Fprintf(bw, "; %d statements in the log (%d without a traceparent)\n", s.Statements, s.Uncommented)
	if s.NoTraceParent > 0 {
		fmt.Fprintf(bw, "%d DB regions logged no traceparent and cannot be joined\n", s.NoTraceParent)
	}
	if s.EndLogged > 0 || s.EndWithoutSpan > 0 {
		fmt.Fprintf(bw, "%d spans end at their statement's end log (the region marks only the start)", s.EndLogged)
		if s.EndWithoutSpan > 0 {
			fmt.Fprintf(bw, "; %d end logs of statements that began before the trace are left out", s.EndWithoutSpan)
		}
		fmt.Fprintln(bw)
	}
	writeHost(bw, r.Host)
	fmt.Fprintf(bw, "\ndifference = app − DB; up to %v: inside the DB, above: outside it\n\n", r.Options.Threshold)
	writeSummary(bw, s)
	fmt.Fprintf(bw, "difference > %v: %d of %d (p50 %s ms)\n", r.Options.Threshold, s.Over, s.Matched, ms(s.OverP50))
	if c := r.DBHost; c != nil {
		fmt.Fprintf(bw, "database host's recording: %s–%s UTC, %d backends; covers %d of %d statements\n",
			c.From.UTC().Format("15:04:05.000"), c.To.UTC().Format("15:04:05.000"), c.Backends, c.Covered, c.Statements)
	}
	if c := r.DBHostPressure; c != nil {
		fmt.Fprintf(bw, "database host's CPU pressure: %s, %d samples (%s); covers %d of %d statements\n", c.Source, c.Samples, c.SpanWords(), c.Covered, c.Statements)
	}
	if r.NetworkFloor > 0 {
		fmt.Fprintf(bw, "network floor: %s ms (the median difference of %d statements the probe saw on time)\n", ms(r.NetworkFloor), r.FloorStatements)
	}
	writeQueries(bw, r, opts)
	if len(r.Unmatched) > 0 {
		q := r.Unmatched[0]
		fmt.Fprintf(bw, "\n%d spans have no statement in the log, e.g. traceparent %s at %s\n", len(r.Unmatched), q.TraceParent, at(r, q))
	}
	return bw.Flush()
}

func writeHost(w io.Writer, h dbwait.HostTotals) {
	if h.Samples == 0 {
		fmt.Fprintln(w, "host: no samples: outside time cannot be classified (unknown)")
		return
	}
	from := "a samples file"
	if h.InTrace {
		from = "the trace"
	}
	fmt.Fprintf(w, "host: %d samples from %s, every %v", h.Samples, from, h.Interval.Round(time.Millisecond))
	if h.Delta != nil {
		fmt.Fprintf(w, "; over %v: %s", h.Delta.Interval.Round(time.Millisecond), hostText(h.Delta))
	}
	fmt.Fprintln(w)
}

func writeSummary(w io.Writer, s dbwait.Summary) {
	fmt.Fprintf(w, "%-10s %8s %10s %10s %12s %14s\n", "verdict", "queries", "app p50", "DB p50", "diff p50", "diff total")
	var total time.Duration
	for v := range dbwait.NumVerdicts {
		vs := s.ByVerdict[v]
		total += vs.OutsideSum
		if vs.Count == 0 {
			continue
		}
		fmt.Fprintf(w, "%-10s %8d %10s %10s %12s %14s\n", v, vs.Count, ms(vs.AppP50), ms(vs.DBP50), ms(vs.OutsideP50), ms(vs.OutsideSum))
	}
	fmt.Fprintf(w, "%-10s %8d %10s %10s %12s %14s   (ms)\n", "all", s.Matched, ms(s.AppP50), ms(s.DBP50), ms(s.OutsideP50), ms(total))
	if s.NetworkOrDBCPU > 0 {
		fmt.Fprintf(w, "network or db-cpu: %d of the %d network verdicts (confidence low): this host was under CPU pressure and no recording of the database host says whether its backends waited for a CPU; `latscope dbhost` on the database host, then --dbhost, decides\n",
			s.NetworkOrDBCPU, s.ByVerdict[dbwait.Network].Count)
	}
}

func writeQueries(w io.Writer, r *dbwait.Result, opts TextOptions) {
	title := "statements outside the DB"
	if opts.All {
		title = "all statements"
	}
	var rows []dbwait.Query
	for _, q := range r.Queries {
		if opts.All || q.Verdict != dbwait.Inside {
			rows = append(rows, q)
		}
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "\nno statement spent more than %v outside the DB\n", r.Options.Threshold)
		return
	}
	fmt.Fprintf(w, "\n%s, in trace order:\n", title)
	fmt.Fprintf(w, "%-10s %-12s %9s %9s %9s  %-9s %-6s %s\n", "at", "wall (UTC)", "app ms", "DB ms", "diff ms", "verdict", "conf.", "rule; evidence")
	for _, q := range rows {
		wall := "-"
		if !q.StartWall.IsZero() {
			wall = q.StartWall.UTC().Format("15:04:05.000")
		}
		evidence := Evidence(q.Evidence)
		if q.Verdict == dbwait.Inside {
			evidence = ""
			if q.LockWait > 0 {
				evidence = fmt.Sprintf("lock wait %s ms", ms(q.LockWait))
			}
		}
		conf := q.Confidence.String()
		if q.Verdict == dbwait.Inside {
			conf = ""
		} else if evidence != "" {
			evidence = q.Rule + "; " + evidence
		}
		verdict := q.Verdict.String()
		if q.Alternative != dbwait.Inside {
			verdict += "?" // "network?": or the alternative the rule names
		}
		fmt.Fprintf(w, "%-10s %-12s %9s %9s %9s  %-9s %-6s %s\n", at(r, q), wall, ms(q.App), ms(q.DB), ms(q.Outside), verdict, cmp.Or(conf, "-"), evidence)
	}
	if !opts.All {
		if n := r.Summary.ByVerdict[dbwait.Inside].Count; n > 0 {
			fmt.Fprintf(w, "(%d statements inside the DB not listed; --all lists them)\n", n)
		}
	}
}

// at is a query's start relative to the trace's first event.
func at(r *dbwait.Result, q dbwait.Query) string {
	return fmt.Sprintf("+%.3fs", q.Start.Sub(r.TraceStart).Seconds())
}

// Evidence is a statement's evidence as one line: the event-free stretch
// and the host counters over the sampled interval.
func Evidence(e dbwait.Evidence) string {
	var b strings.Builder
	fmt.Fprintf(&b, "no trace events %s ms", ms(e.Gap))
	if !e.Placed {
		b.WriteString(" (in the span)")
	}
	fmt.Fprintf(&b, ", goroutine runnable %s ms", ms(e.Runnable))
	if e.Busy > 0 {
		fmt.Fprintf(&b, ", every P busy %s ms", ms(e.Busy))
	}
	if e.Probe {
		fmt.Fprintf(&b, ", probe late %s ms", ms(e.ProbeLate))
		if e.ProbeHead > 0 {
			fmt.Fprintf(&b, " (%s ms as the query left)", ms(e.ProbeHead))
		}
		if e.ProbeTail > 0 {
			fmt.Fprintf(&b, " (%s ms as the answer came)", ms(e.ProbeTail))
		}
		if e.FloorStall > 0 {
			fmt.Fprintf(&b, ", stalls past the usual wait %s ms", ms(e.FloorStall))
		}
	}
	if e.DBHost {
		fmt.Fprintf(&b, ", database's backend on its run queue %s ms outside its timer", ms(e.DBHostWait))
	}
	if p := e.DBHostPressure; p != nil {
		fmt.Fprintf(&b, ", database host's CPU pressure %s ms in %s ms", ms(p.Some), ms(p.Interval))
	}
	if e.Host == nil {
		b.WriteString("; no host samples")
		return b.String()
	}
	fmt.Fprintf(&b, "; %v sampled: %s", e.Host.Interval.Round(time.Millisecond), hostText(e.Host))
	return b.String()
}

// sourceWords name the host sources in the text.
var sourceWords = [hostsig.NumSources]string{
	hostsig.SourceProcess: "process stat", hostsig.SourceSchedstat: "run-queue wait", hostsig.SourceThrottle: "cgroup throttling",
	hostsig.SourceCgroupPSI: "cgroup PSI", hostsig.SourceSystemPSI: "machine PSI", hostsig.SourceSteal: "steal",
}

// hostText is the counters a verdict rests on; an absent source says so.
func hostText(d *hostsig.Delta) string {
	var parts []string
	add := func(src hostsig.Source, f string, args ...any) {
		if d.Has(src) {
			parts = append(parts, fmt.Sprintf(f, args...))
		} else {
			parts = append(parts, sourceWords[src]+" absent")
		}
	}
	add(hostsig.SourceThrottle, "nr_throttled +%d (%s ms)", d.Throttled, ms(d.ThrottledTime))
	add(hostsig.SourceCgroupPSI, "cgroup PSI some +%s ms", ms(d.CgroupSome))
	add(hostsig.SourceSystemPSI, "PSI some +%s ms", ms(d.SystemSome))
	if d.CPUs > 0 {
		add(hostsig.SourceSteal, "steal +%s ms (%d CPUs)", ms(d.Steal), d.CPUs)
	} else {
		add(hostsig.SourceSteal, "steal +%s ms", ms(d.Steal))
	}
	add(hostsig.SourceSchedstat, "run-queue wait +%s ms", ms(d.Wait))
	add(hostsig.SourceProcess, "CPU +%s ms", ms(d.CPU()))
	return strings.Join(parts, ", ")
}

// ms formats a duration in milliseconds with three significant figures
// below 100 ms.
func ms(d time.Duration) string {
	x := float64(d) / float64(time.Millisecond)
	switch a := max(x, -x); {
	case a == 0:
		return "0"
	case a < 1:
		return fmt.Sprintf("%.3f", x)
	case a < 10:
		return fmt.Sprintf("%.2f", x)
	case a < 100:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// Ms formats a duration as WriteText does (milliseconds, no unit).
func Ms(d time.Duration) string { return ms(d) }
