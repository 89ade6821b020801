package triage

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Dependency names what the verdict's slowdown came from (rule 3).
type Dependency uint8

// The dependencies rule 3 can name.
const (
	DepUnknown  Dependency = iota // the data cannot tell
	DepDatabase                   // the DB calls slowed, requests without them did not
	DepOutbound                   // one route's outbound HTTP/gRPC calls slowed, the DB calls did not
	DepHost                       // every request slowed: the process or its host (or the network they share)
)

var dependencyNames = [...]string{DepUnknown: "unknown", DepDatabase: "database", DepOutbound: "outbound", DepHost: "host"}

// String returns the dependency's name ("database", "outbound", ...).
func (d Dependency) String() string {
	if int(d) < len(dependencyNames) {
		return dependencyNames[d]
	}
	return "unknown"
}

// Rise is one dependency's time in the verdict's (instance, bad step)
// pairs against each instance's good steps: Compared pairs had a value,
// and Rose of them were over the instance's baseline by at least half of
// the signal's own rise there (rule 3's bar for requests without DB
// calls). Baseline and Bad are the medians, over the compared pairs, of
// the baseline and of the value (NaN: none). Bounded of the compared
// pairs had no baseline but a value under half the signal's rise, which
// no baseline (never negative) lets rise by it. Thin pairs had a value from
// too few observations for the percentile, and NoBaseline pairs one on an
// instance with fewer than minBaseline good steps that had enough (Good:
// the most such steps one of those instances had): neither is compared.
type Rise struct {
	Compared, Rose   int
	Baseline, Bad    float64
	Bounded          int
	Thin, NoBaseline int
	Good             int
}

// rose says whether at least half the compared pairs rose.
func (r Rise) rose() bool { return r.Compared > 0 && 2*r.Rose >= r.Compared }

// OutboundRise is Rise for one route's outbound time (and one peer, where
// the metric is labelled with one), summed over the instances.
type OutboundRise struct {
	Route, Peer string
	Rise
}

// Name is the route as reports name it: "GET /quote", or "GET /quote → peer" with a peer label.
func (o OutboundRise) Name() string {
	if o.Peer == "" {
		return o.Route
	}
	return o.Route + " → " + o.Peer
}

// DependencyEvidence is rule 3's second half: which dependency the
// verdict's bad steps slowed on.
type DependencyEvidence struct {
	Kind Dependency
	// Quantile is the percentile the dependencies are compared at: the
	// p95, or the signal's own when it stepped down below it (a thin
	// route's p95 is its largest call stretched by the histogram).
	Quantile float64
	// DB is the DB-call percentile's rise (the signal itself with the DB
	// signal); Outbound the rise of each route's outbound percentile that
	// was compared in at least one (instance, bad step) pair, the one
	// named first; Uncomparable the routes that had values in the bad
	// steps but none that could be compared (too few calls, no baseline).
	DB           Rise
	Outbound     []OutboundRise
	Uncomparable []OutboundRise
	// Reason says in words why Kind was chosen.
	Reason string
}

// depQuantile is the percentile rule 3 compares the dependencies at when
// the signal is at q: the p95, or q when it is lower.
func depQuantile(q float64) float64 {
	if q == 0 || q > 0.95 {
		return 0.95
	}
	return q
}

// named returns the outbound series Kind names (nil unless DepOutbound).
func (e *DependencyEvidence) named() *OutboundRise {
	if e.Kind != DepOutbound || len(e.Outbound) == 0 {
		return nil
	}
	return &e.Outbound[0]
}

// dependency is rule 3's second half over the verdict's bad steps idx:
// the DB-call and each route's outbound percentile (depQuantile of the
// signal's: the p95, or lower with a thin signal), compared with the
// instance's good steps in each (instance, bad step) pair, as requests
// without DB calls are (dbPath), then:
//
//   - the DB calls rose, the outbound calls did not, and requests without
//     DB calls did not slow (or nothing says): the database;
//   - a route's outbound calls rose and the DB calls did not: that
//     outbound dependency (its route, and its peer where labelled);
//   - neither rose, and a route had values in the bad steps that could
//     not be compared (too few calls, no baseline), the process not held:
//     unknown, with the route named (it may be the one that slowed);
//   - both rose, or neither did while every request slowed (rule 3
//     all-requests) or the process was held: the host (or the process);
//   - else unknown.
func (r *Report) dependency(in Input, idx []int) DependencyEvidence {
	steps := indexSet(idx)
	q := depQuantile(r.Quantile)
	db := riseAcc{need: VoteNeed(q)}
	outs := map[[2]string]*riseAcc{}
	// stopped: every instance with bad steps in the verdict could not run
	// then (rule 5's throttled, steal or stalled): it delayed every call.
	stopped, found := true, false
	for k := range r.Instances {
		ir := &r.Instances[k]
		if len(verdictPairs(ir, steps)) > 0 {
			found = true
			stopped = stopped && (ir.Cause == "throttled" || ir.Cause == "steal" || ir.Cause == "stalled")
		}
	}
	for k := range r.Instances {
		ir := &r.Instances[k]
		if math.IsNaN(ir.Baseline) {
			continue
		}
		s := in.Instances[k]
		good, pairs := r.goodSteps(ir), verdictPairs(ir, steps)
		dbCall := s.DBCall
		if dbCall == nil && r.Signal != "request" {
			dbCall = s.Signal
		}
		db.add(ir, dbCall, s.DBCalls, good, pairs)
		for _, o := range s.Outbound {
			key := [2]string{o.Route, o.Peer}
			if outs[key] == nil {
				outs[key] = &riseAcc{need: VoteNeed(q)}
			}
			outs[key].add(ir, o.P, o.Count, good, pairs)
		}
	}
	e := DependencyEvidence{Quantile: q, DB: db.rise()}
	for key, a := range outs {
		switch o := (OutboundRise{Route: key[0], Peer: key[1], Rise: a.rise()}); {
		case a.Compared > 0:
			e.Outbound = append(e.Outbound, o)
		case a.Thin+a.NoBaseline > 0:
			e.Uncomparable = append(e.Uncomparable, o)
		}
	}
	sort.Slice(e.Outbound, func(i, j int) bool { return e.Outbound[i].before(e.Outbound[j]) })
	sort.Slice(e.Uncomparable, func(i, j int) bool {
		a, b := e.Uncomparable[i], e.Uncomparable[j]
		if na, nb := a.Thin+a.NoBaseline, b.Thin+b.NoBaseline; na != nb {
			return na > nb
		}
		return a.Name() < b.Name()
	})
	e.decide(r.DBPath, found && stopped)
	return e
}

// before orders the outbound routes: the one that rose first, then the
// one that rose in more pairs, then by more, then by name.
func (o OutboundRise) before(p OutboundRise) bool {
	if o.rose() != p.rose() {
		return o.rose()
	}
	if o.Rose != p.Rose {
		return o.Rose > p.Rose
	}
	if do, dp := o.Bad-o.Baseline, p.Bad-p.Baseline; do != dp {
		return do > dp
	}
	return o.Name() < p.Name()
}

// verdictPairs returns ir's bad steps that are among the verdict's steps.
func verdictPairs(ir *InstanceReport, steps map[int]bool) []int {
	var out []int
	for _, i := range ir.Bad {
		if steps[i] {
			out = append(out, i)
		}
	}
	return out
}

// riseAcc gathers one dependency's Rise over the instances.
type riseAcc struct {
	Rise
	need      float64 // the observations a step needs (VoteNeed of the percentile)
	base, bad []float64
}

// add compares xs (a percentile per step; a step counts with at least
// a.need observations, per counts) in the bad steps pairs of ir with its
// median over the good steps: a pair rose when it is over it by at least
// half of the signal's rise there. Pairs whose signal did not rise (held
// steps) are not compared; pairs with a value from too few observations,
// or without a baseline, are counted as not comparable — but a pair
// without a baseline whose value is under half the signal's rise is
// compared (Bounded): it did not rise, whatever the baseline.
func (a *riseAcc) add(ir *InstanceReport, xs, counts []float64, good, pairs []int) {
	raw := xs
	xs = mask(xs, counts, a.need)
	goodVals := pick(xs, good)
	b := median(goodVals, minBaseline)
	for _, i := range pairs {
		v, half := at(xs, i), (at(ir.Signal, i)-ir.Baseline)/2
		if math.IsNaN(at(raw, i)) || !(half > 0) {
			// no value, or the signal did not rise (a held step: the
			// process, rule 1), so there is no rise to explain
			continue
		}
		switch {
		case math.IsNaN(b) && v < half:
			// no baseline, but a baseline is not negative: a value under
			// half the signal's rise cannot have risen by it
			a.Compared++
			a.Bounded++
			a.bad = append(a.bad, v)
			continue
		case math.IsNaN(b):
			a.NoBaseline++
			a.Good = max(a.Good, len(goodVals))
			continue
		case math.IsNaN(v):
			a.Thin++
			continue
		}
		a.Compared++
		a.base, a.bad = append(a.base, b), append(a.bad, v)
		if v-b >= half {
			a.Rose++
		}
	}
}

// rise returns the Rise with its medians (NaN: nothing compared).
func (a *riseAcc) rise() Rise {
	r := a.Rise
	r.Baseline, r.Bad = median(a.base, 1), median(a.bad, 1)
	return r
}

// decide sets Kind and Reason from the rises and rule 3's DB-path verdict;
// stopped says that every bad instance could not run in its bad steps
// (rule 5: throttled, steal or stalled), which a route not comparable
// does not put in doubt.
func (e *DependencyEvidence) decide(p DBPathEvidence, stopped bool) {
	out := len(e.Outbound) > 0 && e.Outbound[0].rose()
	db := e.DB.rose()
	pq := PName(e.Quantile)
	switch {
	case db && !out && p.Verdict != "all-requests":
		e.Kind = DepDatabase
		e.Reason = fmt.Sprintf("the DB calls slowed: DB-call %s %s → %s, in %d (instance, bad step) pairs of %d", pq, Ms(e.DB.Baseline), Ms(e.DB.Bad), e.DB.Rose, e.DB.Compared)
		if len(e.Outbound) > 0 {
			e.Reason += ", the outbound calls did not"
		}
	case out && !db:
		o := e.Outbound[0]
		e.Kind = DepOutbound
		e.Reason = fmt.Sprintf("its outbound calls slowed: outbound %s %s → %s, in %d (instance, bad step) pairs of %d", pq, Ms(o.Baseline), Ms(o.Bad), o.Rose, o.Compared)
		if e.DB.Compared > 0 {
			e.Reason += fmt.Sprintf("; the DB calls did not: DB-call %s %s → %s", pq, Ms(e.DB.Baseline), Ms(e.DB.Bad))
		}
	case out && db:
		e.Kind = DepHost
		e.Reason = fmt.Sprintf("the DB calls and the outbound calls of %s slowed together: the process or its host delays both", e.Outbound[0].Name())
	case !db && len(e.Uncomparable) > 0 && p.Held == 0 && !(stopped && p.Verdict == "all-requests"):
		// A route that cannot be compared may be the one that slowed: the
		// data cannot tell a slow upstream from a slow host.
		e.Kind = DepUnknown
		e.Reason = "neither the DB calls nor any compared route's outbound calls rose by half the signal's rise"
		if p.Verdict == "all-requests" {
			e.Reason = "requests without DB calls slowed"
		}
		e.Reason += ", and " + e.UncomparablePhrase()
	case p.Verdict == "all-requests" && p.Held > 0:
		e.Kind = DepHost
		e.Reason = "the process was held: every request waited"
	case p.Verdict == "all-requests":
		e.Kind = DepHost
		e.Reason = "every request slowed, with DB calls or without"
		if len(e.Outbound) > 0 {
			e.Reason += ", and no route's outbound calls explain it"
		}
		if len(e.Uncomparable) > 0 && stopped {
			e.Reason += fmt.Sprintf(", and the process could not run (throttled, steal or stalled; %s)", e.UncomparablePhrase())
		}
	default:
		e.Kind = DepUnknown
		e.Reason = "neither the DB calls nor any route's outbound calls rose by half the signal's rise"
		if e.DB.Compared == 0 && len(e.Outbound) == 0 {
			e.Reason = "no DB-call or outbound series in the bad steps"
		}
	}
}

// UncomparablePhrase says which routes' outbound calls could not be
// compared, and why: "the outbound calls of GET /quote could not be
// compared: 2 (instance, bad step) pairs on instances with 1 good step
// with ≥ 2 calls (3 needed)".
func (e *DependencyEvidence) UncomparablePhrase() string {
	if len(e.Uncomparable) == 0 {
		return ""
	}
	o := e.Uncomparable[0]
	need := VoteNeed(e.Quantile)
	var why []string
	if o.NoBaseline > 0 {
		why = append(why, fmt.Sprintf("%d (instance, bad step) pair(s) on instances with %d good step(s) with ≥ %.0f calls (%d needed)", o.NoBaseline, o.Good, need, minBaseline))
	}
	if o.Thin > 0 {
		why = append(why, fmt.Sprintf("%d pair(s) with fewer than %.0f calls, too few for the outbound %s", o.Thin, need, PName(e.Quantile)))
	}
	s := fmt.Sprintf("the outbound calls of %s could not be compared: %s", o.Name(), strings.Join(why, "; "))
	if n := len(e.Uncomparable) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more route(s))", n)
	}
	return s
}

// goodSteps returns the steps of ir with a value that are not bad.
func (r *Report) goodSteps(ir *InstanceReport) []int {
	bad := indexSet(ir.Bad)
	var out []int
	for i, v := range ir.Signal {
		if !math.IsNaN(v) && !bad[i] {
			out = append(out, i)
		}
	}
	return out
}

// pick returns the values of xs at idx, leaving out NaN.
func pick(xs []float64, idx []int) []float64 {
	var out []float64
	for _, i := range idx {
		out = appendValue(out, at(xs, i))
	}
	return out
}

// Unwatched is what the DB-call signal does not see: requests that made
// no DB call (rule 3). Share is their share of the requests in the range
// (NaN: unknown); Slowed counts the instance-steps not bad on the signal
// in which their p95 rose over its lower quartile by the threshold, on Instances
// instances; Outbound the same per route of the outbound time. Nil with --signal request,
// which judges every request.
type Unwatched struct {
	Share     float64
	Slowed    int
	Instances []string
	Outbound  []OutboundSlowed
}

// OutboundSlowed counts the instance-steps in which one route's outbound
// p95 rose over its baseline by the threshold.
type OutboundSlowed struct {
	Route, Peer string
	Steps       int
	// Baseline is the lower quartile of its p95 over the steps (a fault
	// in up to three quarters of them leaves it alone; the median of the
	// instances' that slowed), Worst its highest (seconds).
	Baseline, Worst float64
}

// unwatched is rule 3's note on the DB-call signal: how many requests it
// does not watch, and whether they, or a route's outbound calls, slowed
// by the threshold in steps it did not find bad on that instance.
func (r *Report) unwatched(in Input) *Unwatched {
	if r.Signal == "request" {
		return nil
	}
	u := &Unwatched{Share: math.NaN()}
	thr := r.Threshold.Seconds()
	var all, noDB float64
	outs := map[[2]string]*slowedAcc{}
	var keys [][2]string
	for k, s := range in.Instances {
		bad := indexSet(r.Instances[k].Bad)
		for i := range s.Requests {
			if a, n := at(s.Requests, i), at(s.NoDBCount, i); !math.IsNaN(a) && !math.IsNaN(n) {
				all, noDB = all+a, noDB+n
			}
		}
		if n := slowedSteps(mask(s.NoDB95, s.NoDBCount, VoteNeed(0.95)), thr, bad); n > 0 {
			u.Slowed += n
			u.Instances = append(u.Instances, s.Name)
		}
		for _, o := range s.Outbound {
			key := [2]string{o.Route, o.Peer}
			if outs[key] == nil {
				outs[key] = &slowedAcc{OutboundSlowed: OutboundSlowed{Route: o.Route, Peer: o.Peer, Worst: math.Inf(-1)}}
				keys = append(keys, key)
			}
			outs[key].add(mask(o.P, o.Count, VoteNeed(depQuantile(r.Quantile))), thr, bad)
		}
	}
	if all > 0 {
		u.Share = noDB / all
	}
	for _, key := range keys {
		if a := outs[key]; a.Steps > 0 {
			a.Baseline = median(a.bases, 1)
			u.Outbound = append(u.Outbound, a.OutboundSlowed)
		}
	}
	sort.SliceStable(u.Outbound, func(i, j int) bool { return u.Outbound[i].Steps > u.Outbound[j].Steps })
	return u
}

// slowedAcc gathers one route's OutboundSlowed over the instances.
type slowedAcc struct {
	OutboundSlowed
	bases []float64 // the lower quartiles of the instances that slowed
}

// add counts one instance's steps not in bad in which p (its outbound
// p95) slowed by thr.
func (a *slowedAcc) add(p []float64, thr float64, bad map[int]bool) {
	n := slowedSteps(p, thr, bad)
	if n == 0 {
		return
	}
	a.Steps += n
	a.bases = append(a.bases, quartile(pick(p, allSteps(len(p)))))
	for _, v := range p {
		if v > a.Worst {
			a.Worst = v
		}
	}
}

// slowedSteps counts the steps not in bad in which xs is over its
// baseline, its lower quartile over the steps (a fault in up to three
// quarters of them leaves it alone), by at least thr.
func slowedSteps(xs []float64, thr float64, bad map[int]bool) int {
	vs := pick(xs, allSteps(len(xs)))
	if len(vs) < minBaseline {
		return 0
	}
	m := quartile(vs)
	if math.IsNaN(m) {
		return 0
	}
	n := 0
	for i, v := range xs {
		if v-m >= thr && !bad[i] {
			n++
		}
	}
	return n
}

// quartile returns the lower quartile of xs (NaN when empty): the value
// at a quarter of the sorted values.
func quartile(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[(len(s)-1)/4]
}

// allSteps returns 0, 1, …, n−1.
func allSteps(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// UnwatchedPhrase says what the DB-call signal did not watch, and whether
// it slowed meanwhile ("" with --signal request).
func (r *Report) UnwatchedPhrase() string {
	u := r.Unwatched
	if u == nil {
		return ""
	}
	share := "requests without DB calls"
	if !math.IsNaN(u.Share) {
		share = fmt.Sprintf("requests without DB calls (%.0f %% of the requests)", 100*u.Share)
	}
	if u.Slowed == 0 && len(u.Outbound) == 0 {
		return fmt.Sprintf("not watched by the %s: %s; none of them slowed by %s over their quietest quarter of the steps (--signal request judges every request)", r.SignalName(), share, Dur(r.Threshold))
	}
	var parts []string
	if u.Slowed > 0 {
		parts = append(parts, fmt.Sprintf("their p95 rose by %s or more over its quietest quarter in %d instance-step(s) on %s", Dur(r.Threshold), u.Slowed, Names(u.Instances)))
	}
	for k, o := range u.Outbound {
		if k == maxPerKind {
			parts = append(parts, fmt.Sprintf("… %d more route(s)", len(u.Outbound)-maxPerKind))
			break
		}
		parts = append(parts, fmt.Sprintf("the outbound calls of %s rose by %s or more in %d instance-step(s) (outbound %s %s in the quietest quarter of the steps, %s at worst)",
			OutboundRise{Route: o.Route, Peer: o.Peer}.Name(), Dur(r.Threshold), o.Steps, PName(depQuantile(r.Quantile)), Ms(o.Baseline), Ms(o.Worst)))
	}
	return fmt.Sprintf("not watched by the %s: %s, and they slowed: %s; run again with --signal request to judge every request", r.SignalName(), share, strings.Join(parts, "; "))
}
