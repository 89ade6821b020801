package triagereport

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/triage"
)

// WriteText writes r as text: the range, the six rules with their
// evidence, and the verdict. Every string that came from Prometheus
// (instance and job names, warnings, and the sentences that hold them) is
// printed through termsafe.String, so a label cannot clear the terminal or
// forge a line.
func WriteText(w io.Writer, r *triage.Report) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("latscope triage: %s, %s to %s UTC, %d steps of %s; bad = %s over %s\n",
		who(r), r.Start.UTC().Format("2006-01-02 "+r.ClockLayout()), r.End.UTC().Format("2006-01-02 "+r.ClockLayout()), r.Steps, triage.Dur(r.Step), r.SignalName(), triage.Dur(r.Threshold))
	for _, wr := range r.Warnings {
		p("warning: %s\n", termsafe.String(wr))
	}
	p("\n1. bad steps (%s > %s), per instance:\n", r.SignalName(), triage.Dur(r.Threshold))
	peers := r.AnyPeer()
	head := fmt.Sprintf("   %-24s %6s %5s", "instance", "data", "bad")
	if peers {
		head += fmt.Sprintf(" %5s", "peer")
	}
	if r.Signal == "request" {
		head += fmt.Sprintf(" %5s", "held")
	}
	p("%s %10s %10s\n", head, "baseline", "worst")
	for _, ir := range r.Instances {
		row := fmt.Sprintf("   %-24s %6d %5d", termsafe.String(ir.Name), ir.DataSteps, len(ir.Bad))
		if peers {
			row += fmt.Sprintf(" %5d", len(ir.Peer))
		}
		if r.Signal == "request" {
			row += fmt.Sprintf(" %5d", len(ir.Held))
		}
		p("%s %10s %10s\n", row, triage.Ms(ir.Baseline), triage.Ms(ir.Worst))
	}
	if peers {
		p("   peer: under the threshold, but at least %g times the other instances' median in the same step, %g robust standard deviations of theirs above it, and at least %s\n",
			triage.PeerFactor, triage.PeerMADs, triage.Ms(triage.PeerShare*r.Threshold.Seconds()))
	}
	if r.Signal == "request" {
		p("   held: under the threshold, but the stall probe lost %s or more beyond its usual late wake-ups while requests were served (requests that arrived meanwhile waited before their handlers)\n", stallText(r))
	}
	s := r.Scope
	p("\n2. shared or local: %d bad step(s): %d local, %d shared (at least half the instances), %d partial, %d with one instance reporting\n",
		len(r.BadSteps), s.Local, s.Shared, s.Partial, s.Alone)
	for i, b := range r.BadSteps {
		if i == maxListed {
			p("   … %d more\n", len(r.BadSteps)-maxListed)
			break
		}
		p("   %s  %-8s %d of %d: %s\n", b.Time.UTC().Format("01-02 "+r.ClockLayout()), b.Class, len(b.Bad), b.WithData, termsafe.String(triage.Names(r.RuleNames(b))))
	}
	if len(r.BadSteps) == 0 {
		p("\n3. DB path or not, which dependency: no bad step to compare\n")
	} else {
		// the phrases of an unknown verdict begin with their own label,
		// which the line already gives
		p("\n3. DB path or not (requests without DB calls, db=\"no\"): %s\n", termsafe.String(strings.TrimPrefix(r.DBPathPhrase(), "DB path or not: ")))
	}
	if e := r.DBPath; e.Compared > 0 && !math.IsNaN(e.Baseline99) {
		p("   p95 %s → %s, p99 %s → %s (baseline: median of the good steps → median of the bad steps)\n",
			triage.Ms(e.Baseline95), triage.Ms(e.BadMedian95), triage.Ms(e.Baseline99), triage.Ms(e.BadMedian99))
	}
	if len(r.BadSteps) > 0 {
		p("   which dependency: %s\n", termsafe.String(strings.TrimPrefix(r.DependencyPhrase(), "which dependency: ")))
		for k, o := range r.Dependency.Outbound {
			if k == maxOutbound {
				p("   … %d more route(s) with outbound calls\n", len(r.Dependency.Outbound)-maxOutbound)
				break
			}
			p("   outbound %s: %s %s → %s, rose in %d (instance, bad step) pairs of %d\n", termsafe.String(o.Name()), triage.PName(r.Dependency.Quantile), triage.Ms(o.Baseline), triage.Ms(o.Bad), o.Rose, o.Compared)
		}
		if u := r.Dependency.UncomparablePhrase(); u != "" {
			p("   not compared: %s\n", termsafe.String(u))
		}
	}
	if u := r.UnwatchedPhrase(); u != "" {
		p("   %s\n", termsafe.String(u))
	}
	writeWhen(p, r.When)
	p("\n5. host evidence, seconds per step in the bad steps vs the good steps ± their standard deviation (rose: by at least the threshold and %g standard deviations; gc-share: by %.0f points and as many standard deviations):\n", triage.RoseSDs, 100*triage.GCShareRise)
	for _, ir := range r.Instances {
		if len(ir.Bad) == 0 {
			continue
		}
		p("   %s: cause %s\n", termsafe.String(ir.Name), ir.Cause)
		for _, h := range ir.Host {
			switch {
			case h.Absent:
				p("     %-11s absent\n", h.Signal)
			default:
				rose := ""
				if h.Rose {
					rose = "  rose"
				}
				p("     %-11s %8s %8s %7s%s\n", h.Signal, triage.Sec(h.Bad), triage.Sec(h.Good), "±"+triage.Sec(h.GoodSD), rose)
			}
		}
		writeGC(p, ir.GC)
	}
	p("\nverdict: %s\n", termsafe.String(r.Verdict.Line))
	if r.Verdict.Next != "" {
		p("next: %s\n", termsafe.String(r.Verdict.Next))
	}
	return bw.Flush()
}

// writeGC writes rule 5's GC line of one instance: the collector's
// share of the process's CPU in the bad steps vs the good steps.
func writeGC(p func(string, ...any), e triage.GCEvidence) {
	if e.Absent {
		p("     %-11s absent (GC cannot be told apart)\n", "gc-share")
		return
	}
	rose := ""
	if e.Rose {
		rose = "  rose"
	}
	base := ""
	switch {
	case e.Throughout:
		base = fmt.Sprintf("; GC-heavy throughout (%d of %d steps with a collection far over the peers'): baseline the other instances'", e.Elevated, e.Collected)
	case e.Peers:
		base = "; baseline the other instances' (too few good steps with a collection)"
	case e.LeftOut > 0:
		base = fmt.Sprintf("; %d good step(s) far over the peers' left out of the baseline", e.LeftOut)
	}
	p("     %-11s %8s %8s %7s%s  (share of the process's CPU; gc CPU %s vs %s s/step%s)\n", "gc-share", triage.Pct(e.Bad), triage.Pct(e.Good), "±"+triage.Pct(e.GoodSD), rose, triage.Sec(e.BadCPU), triage.Sec(e.GoodCPU), base)
}

// writeWhen writes rule 4.
func writeWhen(p func(string, ...any), w triage.WhenEvidence) {
	p("\n4. when (UTC): %d run(s) of bad steps\n", w.Clusters)
	var mins, hours []string
	for m, n := range w.ByMinute {
		if n > 0 {
			mins = append(mins, fmt.Sprintf(":%02d ×%d", m, n))
		}
	}
	for h, n := range w.ByHour {
		if n > 0 {
			hours = append(hours, fmt.Sprintf("%02dh ×%d", h, n))
		}
	}
	if len(mins) > 0 {
		p("   minute of the hour: %s\n   hour of the day:    %s\n", strings.Join(mins, "  "), strings.Join(hours, "  "))
	}
	if w.Period == 0 {
		p("   period: none (%s)\n", termsafe.String(w.Reason))
		return
	}
	p("   period: %s, phase %s: %d of %d runs start on it, %d of its %d slots in the range hold one; next %s UTC\n",
		triage.Dur(w.Period), triage.PhaseText(w.Phase, w.Period), w.OnPhase, w.Clusters, w.Hits, w.Slots, w.Next.UTC().Format("2006-01-02 15:04:05"))
	p("   test: p = %s (≤ %g) that one continuous fault from %s to %s puts its runs as periodically (%d draws)\n",
		triage.PText(w.PValue), w.Alpha, w.SpanFrom.UTC().Format(spanLayout(w)), w.SpanTo.UTC().Format(spanLayout(w)), w.Draws)
}
