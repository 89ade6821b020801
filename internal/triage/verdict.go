package triage

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// verdict is rule 6: the verdict sentence and the next step.
func (r *Report) verdict() {
	v := &r.Verdict
	v.DBPath = r.DBPath.Verdict
	if v.DBPath == "" {
		v.DBPath = "unknown"
	}
	v.Period = r.When.Period
	v.Rule = r.rules()
	v.Dependency = r.Dependency.Kind
	if o := r.Dependency.named(); o != nil {
		v.Route, v.Peer = o.Route, o.Peer
	}
	what := r.SignalName() + " over " + Dur(r.Threshold)
	switch v.Scope {
	case "none":
		v.DBPath = "unknown"
		if len(r.Instances) >= minPeers+1 {
			what += fmt.Sprintf(" (or at least %g times the other instances')", PeerFactor)
		}
		v.Line = fmt.Sprintf("no bad step: %s in none of the %d steps on %d instance(s)", what, r.Steps, len(r.Instances))
		if u := r.UnwatchedPhrase(); u != "" {
			v.Line += "; " + u
		}
		if u := r.Unwatched; u != nil && (u.Slowed > 0 || len(u.Outbound) > 0) {
			v.Next = "run `latscope triage --signal request` over the same range: it judges every request, those without DB calls too, and names the route whose outbound calls slowed"
		}
		return
	case "unknown":
		v.Line = fmt.Sprintf("%d bad step(s) (%s) but only one instance had data in them: shared or local cannot be told", len(r.BadSteps), what)
		v.Next = r.snapshotNext(r.badInstanceNames())
		return
	case "local":
		ir := r.instance(v.Instance)
		v.Cause = ir.Cause
		v.Line = fmt.Sprintf("local to %s: %s in %d step(s)%s%s, %d of them with no other instance bad; %s; %s; %s; host: %s",
			v.Instance, what, len(ir.Bad), r.peerPhrase(ir), r.heldPhrase(ir), r.Scope.LocalBy[v.Instance], r.DependencyPhrase(), r.DBPathPhrase(), r.whenPhrase(), r.causePhrase(ir))
		v.Next = r.retriageNext() + r.snapshotNext([]string{v.Instance}) + r.nextTool()
		if v.Cause == "gc" {
			v.Next = r.snapshotNext([]string{v.Instance}) + gcNext(v.Instance)
		}
	case "shared":
		n := r.Scope.Shared + r.Scope.Partial
		v.Line = fmt.Sprintf("shared: %s in %d step(s) with several instances bad at once (%d with at least half of them), %d local step(s): %s; %s; %s",
			what, n, r.Scope.Shared, r.Scope.Local, r.DependencyPhrase(), r.DBPathPhrase(), r.whenPhrase())
		who := r.badInstanceNames()
		if v.Dependency == DepOutbound && len(who) > 1 {
			// One instance is enough: the dependency is the same for all.
			who = who[:1]
		}
		v.Next = r.retriageNext() + r.snapshotNext(who) + r.nextTool()
	}
	if u := r.UnwatchedPhrase(); u != "" && r.Unwatched.Slowed+len(r.Unwatched.Outbound) > 0 {
		v.Line += "; " + u
	}
}

// DependencyPhrase is rule 3's dependency in words: which one, and the
// numbers that name it.
func (r *Report) DependencyPhrase() string {
	e := r.Dependency
	shared := r.Verdict.Scope == "shared"
	var what string
	switch e.Kind {
	case DepDatabase:
		what = "the DB path of this instance alone (its pool, connections, network path, or the process making the calls: the others' DB calls were not slow)"
		if shared {
			what = "a shared dependency, the database or the network to it"
		}
	case DepOutbound:
		what = fmt.Sprintf("the outbound HTTP/gRPC calls of %s", e.named().Name())
		if shared {
			what = "a shared dependency, " + what
		}
	case DepHost:
		what = "the host or the process"
		if shared {
			what = "the hosts or the network the instances share, not one dependency"
		}
	default:
		what = "which dependency: unknown"
	}
	return what + " (" + e.Reason + ")"
}

// nextTool is the tool the next step runs on the snapshot, fitted to the
// dependency: dbwait for the database (and for the host, with the DB
// signal: it classifies the time outside the database); analyze on the
// route for an outbound dependency, which dbwait cannot see.
func (r *Report) nextTool() string {
	switch r.Dependency.Kind {
	case DepDatabase:
		return "; then `latscope dbwait --pglog postgresql.json SNAPSHOT` shows whether the time was inside the database (locks, plans) or outside it (network)"
	case DepOutbound:
		o := r.Dependency.named()
		s := fmt.Sprintf("; then `latscope analyze --task %s SNAPSHOT` shows the time of %s's requests in their outbound calls (the `http HOST` and `rpc METHOD` regions name what was called)", shellQuote(o.Route), o.Route)
		if o.Peer != "" {
			s += "; look at " + o.Peer + ", the peer they call"
		} else {
			s += "; the service called, not the database, is the one to look at"
		}
		return s
	case DepHost:
		if r.Signal != "request" {
			return "; then `latscope dbwait --pglog postgresql.json SNAPSHOT` classifies the time outside the database (throttled, steal, paused)"
		}
		return "; then `latscope analyze SNAPSHOT` shows the requests' time waiting for a CPU (runnable) and stalled"
	}
	return "; then `latscope analyze SNAPSHOT` shows where the slow requests' time went"
}

// retriageSteps is how many steps before the first bad step the range of
// retriageNext starts: room for minBaseline good steps and a margin.
const retriageSteps = 10

// retriageNext is the first next step when a route's outbound calls could
// not be compared (rule 3, uncomparable): triage that route alone, judging
// every request, over a range that starts earlier, so that its good steps
// give a baseline ("" otherwise).
func (r *Report) retriageNext() string {
	e := r.Dependency
	if e.Kind != DepUnknown || len(e.Uncomparable) == 0 || len(r.BadSteps) == 0 {
		return ""
	}
	o := e.Uncomparable[0]
	since := r.BadSteps[0].Time.Add(-retriageSteps * r.Step).UTC().Format(time.RFC3339)
	return fmt.Sprintf("run `latscope triage --route %s --signal request --since %s --until %s` (the same step and threshold): from %d steps before the first bad one, its outbound calls get good steps to compare with (%d with %.0f calls or more are needed); if it still cannot tell, ",
		shellQuote(o.Route), since, r.End.UTC().Format(time.RFC3339), retriageSteps, minBaseline, VoteNeed(e.Quantile))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// peerPhrase says how many of ir's bad steps the peer rule made bad
// ("" when none).
func (r *Report) peerPhrase(ir *InstanceReport) string {
	if len(ir.Peer) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them by the peer rule: under the threshold, but at least %g times the other instances' median in the same step)", len(ir.Peer), PeerFactor)
}

// AnyPeer says whether the peer rule made any step bad.
func (r *Report) AnyPeer() bool {
	for _, ir := range r.Instances {
		if len(ir.Peer) > 0 {
			return true
		}
	}
	return false
}

// RuleNames names the bad instances of b, each marked "(peer)" or
// "(held)" when that rule, not the threshold, made it bad there.
func (r *Report) RuleNames(b BadStep) []string {
	out := make([]string, len(b.Bad))
	for k, name := range b.Bad {
		out[k] = name
		ir := r.instance(name)
		switch {
		case ir == nil:
		case slices.Contains(ir.Peer, b.Index):
			out[k] += " (peer)"
		case slices.Contains(ir.Held, b.Index):
			out[k] += " (held)"
		}
	}
	return out
}

// rules says which of rule 1's rules made the verdict's bad steps bad:
// "threshold", "peer", "held", joined by "+" ("" without bad steps).
func (r *Report) rules() string {
	var thr, peer, held bool
	steps := indexSet(r.verdictSteps())
	for _, ir := range r.Instances {
		if r.Verdict.Scope == "local" && ir.Name != r.Verdict.Instance {
			continue
		}
		p, h := indexSet(ir.Peer), indexSet(ir.Held)
		for _, i := range ir.Bad {
			if !steps[i] {
				continue
			}
			switch {
			case p[i]:
				peer = true
			case h[i]:
				held = true
			default:
				thr = true
			}
		}
	}
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{thr, "threshold"}, {peer, "peer"}, {held, "held"}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return strings.Join(out, "+")
}

// heldPhrase says how many of ir's bad steps were held, and why they
// count ("" when none).
func (r *Report) heldPhrase(ir *InstanceReport) string {
	if len(ir.Held) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them held: the %s stayed under it, but the stall probe woke %s or more late while requests arrived, and requests read after the process resumed are timed from then)",
		len(ir.Held), r.SignalName(), r.stallText())
}

// SignalName says what the signal is: "DB-call p95", "request p99", or
// the lower percentile used when steps have too few observations.
func (r *Report) SignalName() string {
	q := r.Quantile
	if q == 0 {
		q = signalQuantile(r.Signal)
	}
	if r.Signal == "request" {
		return "request " + PName(q)
	}
	return "DB-call " + PName(q)
}

// DBPathPhrase is rule 3 in words.
func (r *Report) DBPathPhrase() string {
	e := r.DBPath
	unit := "bad steps"
	if r.Verdict.Scope != "local" {
		unit = "(instance, bad step) pairs"
	}
	switch e.Verdict {
	case "all-requests":
		held := ""
		if e.Held > 0 {
			held = fmt.Sprintf(", %d of them held by a stall of the process", e.Held)
		}
		why := " (all requests: the host or the process)"
		if o := r.Dependency.named(); o != nil {
			why = fmt.Sprintf(" (by the outbound calls of %s)", o.Name())
		} else if d := r.Dependency; d.Kind == DepUnknown && len(d.Uncomparable) > 0 {
			why = fmt.Sprintf(" (all requests: the host, the process, or the outbound calls of %s, which could not be compared)", d.Uncomparable[0].Name())
		}
		return fmt.Sprintf("requests without DB calls slowed too in %d of %d %s%s%s", e.Rose, e.Compared, unit, held, why)
	case "db-only":
		return fmt.Sprintf("requests without DB calls did not slow (%d of %d %s rose): the DB path only", e.Rose, e.Compared, unit)
	}
	return "DB path or not: unknown (" + e.Reason + ")"
}

// whenPhrase is rule 4 in words.
func (r *Report) whenPhrase() string {
	w := r.When
	if w.Period == 0 {
		if w.Candidate > 0 {
			return fmt.Sprintf("no period found (every %s: p = %s, over %g, against one continuous fault)", Dur(w.Candidate), PText(w.PValue), w.Alpha)
		}
		return "no period found"
	}
	return fmt.Sprintf("repeats every %s (phase %s, %d of %d slots, p = %s against one continuous fault)", Dur(w.Period), PhaseText(w.Phase, w.Period), w.Hits, w.Slots, PText(w.PValue))
}

// PhaseText names a phase on the clock: ":MM" for hourly periods, else
// the first occurrence's time.
func PhaseText(t time.Time, p time.Duration) string {
	t = t.UTC()
	switch {
	case p%time.Hour == 0 && p < 24*time.Hour:
		return fmt.Sprintf("at :%02d", t.Minute())
	case p%(24*time.Hour) == 0:
		return "at " + t.Format("15:04") + " UTC"
	}
	return "from " + t.Format("15:04:05") + " UTC"
}

// causePhrase is rule 5 in words for one instance: the cause, the host
// signals that rose (beside the collector, when it is the cause), the GC
// evidence, and the absent signals.
func (r *Report) causePhrase(ir *InstanceReport) string {
	var rose, absent []string
	for _, h := range ir.Host {
		switch {
		case h.Absent:
			absent = append(absent, h.Signal.String())
		case h.Rose:
			rose = append(rose, fmt.Sprintf("%s %s s/step (vs %s)", h.Signal, Sec(h.Bad), Sec(h.Good)))
		}
	}
	s := ir.Cause
	switch {
	case ir.Cause == "gc":
		s += " (" + gcPhrase(ir.GC)
		if len(rose) > 0 {
			s += "; risen with it, as the collector's own CPU makes them: " + strings.Join(rose, ", ")
		}
		s += ")"
	case len(rose) > 0:
		s += " (" + strings.Join(rose, ", ") + ")"
	default:
		s += " (no host signal rose by the threshold per step)"
	}
	switch {
	case ir.Cause == "gc":
	case ir.GC.Absent && (ir.Cause == "throttled" || ir.Cause == "steal"):
		// a quota or the hypervisor held the process whatever it ran
		absent = append(absent, "gc-share")
	default:
		s += "; " + gcPhrase(ir.GC)
	}
	if len(absent) > 0 {
		s += "; absent: " + strings.Join(absent, ", ")
	}
	return s
}

// gcNext is the next step's tool when the collector is the cause: the
// snapshot's GC waits, a heap profile, and the collector's settings.
func gcNext(instance string) string {
	return fmt.Sprintf("; then `latscope analyze SNAPSHOT` shows the slow requests' waits of kind `GC assist` and `GC`; a heap profile of %s (`go tool pprof http://%s/debug/pprof/heap`, where it serves net/http/pprof) shows what allocates; GOGC or GOMEMLIMIT trade memory for fewer collections", instance, instance)
}

// badInstanceNames lists the instances with bad steps in the verdict's steps.
func (r *Report) badInstanceNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, b := range r.BadSteps {
		if r.Verdict.Scope == "shared" && b.Class != Shared && b.Class != Partial {
			continue
		}
		for _, n := range b.Bad {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}

// snapshotNext says which instance(s) and which time window to snapshot.
func (r *Report) snapshotNext(names []string) string {
	w := r.When
	who := strings.Join(names, ", ")
	if len(names) > 1 {
		who = "any of " + who
	}
	s := fmt.Sprintf("take a flight-recorder snapshot (POST /debug/latscope/snapshot) on %s", who)
	if !w.Next.IsZero() {
		s += fmt.Sprintf(" during the next occurrence, %s–%s UTC", w.Next.UTC().Format("2006-01-02 15:04:05"), w.Next.Add(w.LastEnd.Sub(w.Last)).UTC().Format("15:04:05"))
	} else if !w.Last.IsZero() {
		s += fmt.Sprintf(" when it is slow again (last %s–%s UTC)", w.Last.UTC().Format("2006-01-02 15:04:05"), w.LastEnd.UTC().Format("15:04:05"))
	}
	return s
}

// Dur formats d without zero trailing units ("1h", "1m30s", "50ms").
func Dur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
