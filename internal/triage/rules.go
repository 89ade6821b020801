package triage

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultBuckets are the bucket upper bounds (seconds) of the agent's
// histograms, used when the data does not say.
var DefaultBuckets = []float64{.001, .0025, .005, .01, .02, .03, .04, .05, .06, .075, .1, .15, .2, .3, .5, .75, 1, 2.5, 5, 10}

// The rules' fixed numbers; docs/triage.md argues for each.
const (
	// minBaseline is the fewest good steps a baseline (a median) is taken from.
	minBaseline = 3
)

// Analyze applies the rules to in. It does no I/O and never fails: what
// the data cannot support is a warning and an "unknown".
func Analyze(in Input, p Params) *Report {
	r := &Report{
		Start: in.Start, End: in.Start.Add(time.Duration(in.Steps) * in.Step),
		Step: in.Step, Threshold: p.Threshold, Signal: p.Signal, Steps: in.Steps,
	}
	if r.Signal == "" {
		r.Signal = "db"
	}
	thr := p.Threshold.Seconds()
	r.checkThreshold(in.Buckets, thr)
	r.Quantile = in.Quantile
	if r.Quantile == 0 {
		r.Quantile = signalQuantile(r.Signal)
	}
	in, thin := r.thinSteps(in)
	for k, s := range in.Instances {
		ir := badSteps(s, thr)
		ir.Thin = thin[k]
		ir.HostSteps, ir.GCShare = s.Host, gcShares(s)
		r.Instances = append(r.Instances, ir)
	}
	r.peerSteps(in, thr)
	stallBar := fleetStallBar(in, thr)
	r.MinStall = r.minStall(thr)
	minStall := r.MinStall
	if r.Signal == "request" {
		for i, s := range in.Instances {
			r.Instances[i].addHeld(s, minStall, stallBar)
		}
	}
	r.classifySteps(in)
	r.decideScope()
	bad := r.verdictSteps()
	for i := range r.Instances {
		ir := &r.Instances[i]
		if len(ir.Bad) == 0 {
			continue
		}
		s := in.Instances[i]
		if good := ir.DataSteps - len(ir.Bad); good < minBaseline {
			r.warnInstance(fewGood, ir.Name, "%s has %d good step(s): fewer than %d give no baseline, so its DB path and host evidence are unknown", ir.Name, good, minBaseline)
		}
		ir.DBPath = dbPath(s, ir, ir.Bad)
		ir.Host = hostEvidence(s, ir, thr)
		ir.GC = gcEvidence(in, i, ir)
		ir.Cause = cause(ir.Host, ir.GC)
	}
	r.hiddenStalls(in, minStall, stallBar)
	r.DBPath = r.fleetDBPath(in, bad)
	if len(bad) > 0 {
		r.Dependency = r.dependency(in, bad)
	}
	r.Unwatched = r.unwatched(in)
	r.When = when(in, bad)
	r.verdict()
	r.flushWarnings()
	return r
}

// checkThreshold warns when thr is not a bucket boundary.
func (r *Report) checkThreshold(buckets []float64, thr float64) {
	if len(buckets) == 0 {
		buckets = DefaultBuckets
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, b := range buckets {
		if math.Abs(b-thr) <= 1e-9*math.Max(1, thr) {
			return
		}
		if b < thr && b > lo {
			lo = b
		}
		if b > thr && b < hi {
			hi = b
		}
	}
	r.warn("threshold %v is not a bucket boundary (nearest: %s and %s): histogram_quantile interpolates inside a bucket, so 'over %v' assumes the calls spread evenly between them",
		r.Threshold, secs(lo), secs(hi), r.Threshold)
}

// secs formats seconds as a duration, or "none" for an infinity.
func secs(s float64) string {
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return "none"
	}
	return time.Duration(s * float64(time.Second)).String()
}

func (r *Report) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
	r.WarningsTotal++
}

// Rule 1's support: a step's percentile counts only when enough
// observations lie over it (docs/triage.md).
const (
	// minTail is the fewest observations over a step's percentile: a q
	// quantile needs minTail/(1−q) observations in the step (the p95 100,
	// the p99 500), so that fewer than minTail slow calls never make a
	// step bad.
	minTail = 5
	// maxThinShare is the largest share of the instance-steps with
	// observations that may be too thin for the signal's percentile
	// before a lower one is used.
	maxThinShare = 0.1
)

// quantileLadder are the percentiles the signal steps down through.
var quantileLadder = []float64{0.99, 0.95, 0.9, 0.75, 0.5}

// signalQuantile is the signal's own percentile: the DB-call p95, the
// request p99.
func signalQuantile(signal string) float64 {
	if signal == "request" {
		return 0.99
	}
	return 0.95
}

// needFor is the observations a step needs for its q quantile.
func needFor(q float64) float64 { return math.Ceil(minTail/(1-q) - 1e-9) }

// VoteNeed is the observations a step needs for the q quantile of the
// requests without DB calls in rule 3: one over it (the p99 100, the p95
// 20), so that the quantile lies within the step's requests and is not
// their largest stretched by the histogram's interpolation. Rule 3 votes
// over the bad steps, so one step's noise does not decide it alone.
func VoteNeed(q float64) float64 { return math.Ceil(1/(1-q) - 1e-9) }

// chooseQuantile returns the highest percentile of quantileLadder, at
// most in.Quantile, that at most maxThinShare of the instance-steps with
// observations are too thin for; the lowest when none is. Without counts
// it keeps in.Quantile.
func chooseQuantile(in Input) float64 {
	var counts []float64
	for _, s := range in.Instances {
		for _, c := range s.Counts {
			if c > 0 {
				counts = append(counts, c)
			}
		}
	}
	if len(counts) == 0 {
		return in.Quantile
	}
	q := in.Quantile
	for _, q = range quantileLadder {
		if q > in.Quantile+1e-12 {
			continue
		}
		thin := 0
		for _, c := range counts {
			if c < needFor(q) {
				thin++
			}
		}
		if float64(thin) <= maxThinShare*float64(len(counts)) {
			return q
		}
	}
	return q
}

// PName names a quantile as a percentile: 0.95 → "p95".
func PName(q float64) string { return "p" + strconv.FormatFloat(100*q, 'g', -1, 64) }

// thinSteps returns in with the steps that have too few observations for
// their percentile taken out (no value): the signal's for r.Quantile, and
// the no-DB p95 and p99 for theirs; and the signal's steps taken out per
// instance. It counts and warns, once.
func (r *Report) thinSteps(in Input) (Input, []int) {
	out := in
	out.Instances = make([]InstanceSeries, len(in.Instances))
	thin := make([]int, len(in.Instances))
	need := needFor(r.Quantile)
	var first []string
	for k, s := range in.Instances {
		s.Signal = maskThin(s.Signal, s.Counts, s.Over, need)
		s.NoDB95, s.NoDB99 = mask(s.NoDB95, s.NoDBCount, VoteNeed(0.95)), mask(s.NoDB99, s.NoDBCount, VoteNeed(0.99))
		n := 0
		for i, v := range in.Instances[k].Signal {
			if !math.IsNaN(v) && math.IsNaN(s.Signal[i]) {
				if n++; n == 1 && len(first) < maxPerKind {
					first = append(first, fmt.Sprintf("%s at %s", s.Name, r.Start.Add(time.Duration(i)*r.Step).UTC().Format(r.ClockLayout())))
				}
			}
		}
		r.Thin += n
		thin[k] = n
		out.Instances[k] = s
	}
	what := "DB calls"
	if r.Signal == "request" {
		what = "requests"
	}
	if own := signalQuantile(r.Signal); r.Quantile < own {
		r.warn("too few %s per step for the %s (it needs %.0f, %d over it) in more than %.0f %% of the instance-steps: the signal is the %s, which needs %.0f",
			what, PName(own), needFor(own), minTail, 100*maxThinShare, r.SignalName(), need)
	}
	if r.Thin > 0 {
		more := ""
		if r.Thin > len(first) {
			more = ", …"
		}
		r.warn("%d instance-step(s) had fewer than %.0f %s, too few for the %s (%d over it): no value there, neither bad nor good (%s%s)",
			r.Thin, need, what, PName(r.Quantile), minTail, strings.Join(first, ", "), more)
	}
	return out, thin
}

// maskThin is mask for the signal: a step with too few observations for
// its percentile keeps its value all the same when at least minTail of
// them were over the threshold (over): its fault shows, whatever its
// throughput.
func maskThin(xs, counts, over []float64, need float64) []float64 {
	if over == nil {
		return mask(xs, counts, need)
	}
	eff := make([]float64, len(counts))
	for i, c := range counts {
		eff[i] = c
		if at(over, i) >= minTail {
			eff[i] = math.Inf(1)
		}
	}
	return mask(xs, eff, need)
}

// mask returns xs with NaN where counts is under need (xs itself when
// nothing changes or counts is nil).
func mask(xs, counts []float64, need float64) []float64 {
	if xs == nil || counts == nil {
		return xs
	}
	var out []float64
	for i, v := range xs {
		if math.IsNaN(v) || at(counts, i) >= need {
			continue
		}
		if out == nil {
			out = append([]float64(nil), xs...)
		}
		out[i] = math.NaN()
	}
	if out == nil {
		return xs
	}
	return out
}

// The peer rule's numbers (docs/triage.md, rule 1).
const (
	// PeerFactor: an instance is far over its peers in a step when its
	// signal is at least PeerFactor times the median of the others'...
	PeerFactor = 5.0
	// PeerMADs ... and over that median by more than PeerMADs robust
	// standard deviations of the others (1.4826 × their MAD)...
	PeerMADs = 5.0
	// PeerShare ... and at least PeerShare of the threshold (a minimum
	// effect: a few milliseconds' difference is no incident).
	PeerShare = 0.2
	// minPeers is the fewest other instances with a value in the step.
	minPeers = 2
)

// peerSteps is rule 1's peer rule: in each step with a value for at
// least minPeers+1 instances, an instance under the threshold whose
// signal is far over the others' (PeerFactor, PeerMADs, PeerShare) is bad
// there all the same.
func (r *Report) peerSteps(in Input, thr float64) {
	vals := make([]float64, 0, len(in.Instances))
	who := make([]int, 0, len(in.Instances))
	others := make([]float64, 0, len(in.Instances))
	sorted := make([]float64, 0, len(in.Instances))
	added := make([]bool, len(in.Instances))
	for i := 0; i < in.Steps; i++ {
		vals, who = vals[:0], who[:0]
		for k, s := range in.Instances {
			if v := at(s.Signal, i); !math.IsNaN(v) {
				vals, who = append(vals, v), append(who, k)
			}
		}
		if len(vals) < minPeers+1 {
			continue
		}
		sorted = append(sorted[:0], vals...)
		sort.Float64s(sorted)
		// Without one value, the others' median is at least the element
		// below the middle: a bound that spares the exact median and MAD
		// for all but the few instances far over it.
		floor := sorted[(len(sorted)-2)/2]
		for j, v := range vals {
			if v > thr || v < PeerShare*thr || v < PeerFactor*floor {
				continue
			}
			others = others[:0]
			for jj, o := range vals {
				if jj != j {
					others = append(others, o)
				}
			}
			if !peerOutlier(v, others) {
				continue
			}
			ir := &r.Instances[who[j]]
			ir.Peer = append(ir.Peer, i)
			added[who[j]] = true
		}
	}
	for k, ok := range added {
		if !ok {
			continue
		}
		ir := &r.Instances[k]
		ir.Bad = append(ir.Bad, ir.Peer...)
		sort.Ints(ir.Bad)
		ir.rebaseline()
	}
}

// peerOutlier is rule 1's peer test: v is at least PeerFactor times the
// median of others and over it by more than PeerMADs robust standard
// deviations of them (1.4826 × their MAD). It reorders and overwrites
// others.
func peerOutlier(v float64, others []float64) bool {
	m := median(others, 1)
	if math.IsNaN(m) || v < PeerFactor*m {
		return false
	}
	for i := range others {
		others[i] = math.Abs(others[i] - m)
	}
	return v-m > PeerMADs*1.4826*median(others, 1)
}

// rebaseline sets the baseline again from the steps that are not bad.
func (ir *InstanceReport) rebaseline() {
	isBad := indexSet(ir.Bad)
	var good []float64
	for i, v := range ir.Signal {
		if !math.IsNaN(v) && !isBad[i] {
			good = append(good, v)
		}
	}
	ir.Baseline = median(good, minBaseline)
}

// maxPerKind is how many warnings of one per-instance kind are listed one
// by one; more are summed up in one line.
const maxPerKind = 3

// warnKind is a kind of per-instance warning.
type warnKind uint8

const (
	fewGood warnKind = iota // too few good steps for a baseline
	numWarnKinds
)

// warnGroup holds one kind's warnings: the first maxPerKind, the first
// instances' names, and the count.
type warnGroup struct {
	lines, names []string
	n            int
}

// warnInstance records a warning of kind about the instance name. At the
// end of Analyze, a kind with at most maxPerKind warnings gives them as
// they are; one with more gives one line with the count and the first
// instances (at 100,000 instances, 50,000 lines became one).
func (r *Report) warnInstance(kind warnKind, name, format string, args ...any) {
	g := &r.groups[kind]
	if g.n++; g.n <= maxPerKind {
		g.lines = append(g.lines, fmt.Sprintf(format, args...))
		g.names = append(g.names, name)
	}
	r.WarningsTotal++
}

// flushWarnings appends the per-instance warnings, summed up by kind.
func (r *Report) flushWarnings() {
	for kind := range numWarnKinds {
		g := r.groups[kind]
		if g.n <= maxPerKind {
			r.Warnings = append(r.Warnings, g.lines...)
			continue
		}
		first := fmt.Sprintf("first: %s, …", strings.Join(g.names, ", "))
		switch kind {
		case fewGood:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d instances have fewer than %d good steps, so their DB path and host evidence are unknown (%s)", g.n, minBaseline, first))
		}
	}
	r.groups = [numWarnKinds]warnGroup{}
}

// badSteps is rule 1 for one instance.
func badSteps(s InstanceSeries, thr float64) InstanceReport {
	ir := InstanceReport{Name: s.Name, Signal: s.Signal, Worst: math.NaN()}
	var good []float64
	for i, v := range s.Signal {
		if math.IsNaN(v) {
			continue
		}
		ir.DataSteps++
		if v > thr {
			ir.Bad = append(ir.Bad, i)
			if !(v <= ir.Worst) {
				ir.Worst = v
			}
		} else {
			good = append(good, v)
		}
	}
	ir.Baseline = median(good, minBaseline)
	return ir
}

// addHeld is rule 1's second half, for the request signal: a step whose
// signal stayed under thr is bad all the same when the stall probe lost
// at least thr more in it than its late wake-ups usually lose (so one
// wake-up was about that late: the process could not run for that long;
// see stalledSteps) and requests were served in it. The agent times a
// request from its handler's start, so the requests that arrived while
// the process was held, and were read after it resumed, look fast; only
// those already in a handler show the stall.
func (ir *InstanceReport) addHeld(s InstanceSeries, min, bar float64) {
	if s.Requests == nil {
		return
	}
	stalled := stalledSteps(s, min, bar)
	if stalled == nil {
		return
	}
	isBad := indexSet(ir.Bad)
	for i, v := range s.Signal {
		if isBad[i] || math.IsNaN(v) || i >= len(stalled) || !stalled[i] || !(at(s.Requests, i) > 0) {
			continue
		}
		ir.Held = append(ir.Held, i)
	}
	if len(ir.Held) == 0 {
		return
	}
	ir.Bad = append(ir.Bad, ir.Held...)
	sort.Ints(ir.Bad)
	ir.rebaseline()
}

// minStall is the shortest stall (seconds) that rule 1 counts: one long
// enough that the calls arriving during it, had they been timed from
// their arrival, would be more than 1 − q of the step's calls and late by
// the threshold, q being the signal's quantile: thr + (1 − q)·step. A
// shorter one could not bring the step's percentile over the threshold
// however it was timed (a 100 ms stall in a 2 s step delays 5 % of the
// calls by at most 70 ms).
func (r *Report) minStall(thr float64) float64 {
	return thr + (1-r.Quantile)*r.Step.Seconds()
}

// stallText is MinStall as a duration, to the millisecond.
func (r *Report) stallText() string {
	return Dur(time.Duration(r.MinStall * float64(time.Second)).Round(time.Millisecond))
}

// stallMADs is how many robust standard deviations of the fleet's steps
// the stall probe's loss in a step must stand above their median to be
// one stall (docs/triage.md, rule 1): the test runs over every
// instance-step, so its bar is high.
const stallMADs = 5.0

// fleetStallBar is the loss (seconds) a step's stall probe must reach to
// count as one stall (stalledSteps): the median of every instance-step's
// loss, plus the threshold or stallMADs robust standard deviations (1.4826
// × MAD) of them, whichever is more. On a busy host every instance's
// probe loses 0.1–0.3 s per 2 s step in late wake-ups, and a single
// wake-up 100 ms late is the host's noise, not a fault.
func fleetStallBar(in Input, thr float64) float64 {
	var ls []float64
	for _, s := range in.Instances {
		for _, l := range s.Host[Stall] {
			if !math.IsNaN(l) {
				ls = append(ls, l)
			}
		}
	}
	c := median(ls, 1)
	if math.IsNaN(c) {
		return thr
	}
	for k := range ls {
		ls[k] = math.Abs(ls[k] - c)
	}
	return c + math.Max(thr, stallMADs*1.4826*median(ls, 1))
}

// stalledSteps says, per step, whether the process could not run for
// min (minStall) at once, by the stall probe: (1) what the probe lost
// beyond what its other late wake-ups usually lose, lost − (n−1)·m (n the
// step's late wake-ups, m the median over the instance's steps of lost/n:
// a busy host makes many wake-ups a few milliseconds late; one of the n
// may be the long one), is at least min, and (2) what it lost reaches bar
// (fleetStallBar): more than the fleet's steps lose. Without the wake-up
// count (latscope_stalls_total) or the lost time, it returns nil.
func stalledSteps(s InstanceSeries, min, bar float64) []bool {
	lost := s.Host[Stall]
	if lost == nil || s.Stalls == nil {
		return nil
	}
	var per []float64
	for i, l := range lost {
		if n := at(s.Stalls, i); n > 0 && !math.IsNaN(l) {
			per = append(per, l/n)
		}
	}
	m := median(per, 1)
	if math.IsNaN(m) {
		m = 0
	}
	out := make([]bool, len(lost))
	for i, l := range lost {
		n := at(s.Stalls, i)
		if math.IsNaN(n) {
			n = 0
		}
		out[i] = l-max(n-1, 0)*m >= min && l >= bar
	}
	return out
}

// indexSet returns the step indices idx as a set.
func indexSet(idx []int) map[int]bool {
	set := make(map[int]bool, len(idx))
	for _, i := range idx {
		set[i] = true
	}
	return set
}

// classifySteps is rule 2: per step, how many instances were bad at once.
func (r *Report) classifySteps(in Input) {
	r.Scope.LocalBy = map[string]int{}
	bad := make([]map[int]bool, len(r.Instances))
	for k, ir := range r.Instances {
		bad[k] = indexSet(ir.Bad)
	}
	for i := 0; i < in.Steps; i++ {
		var bs BadStep
		for k, s := range in.Instances {
			if math.IsNaN(at(s.Signal, i)) {
				continue
			}
			bs.WithData++
			if bad[k][i] {
				bs.Bad = append(bs.Bad, s.Name)
			}
		}
		if len(bs.Bad) == 0 {
			continue
		}
		bs.Index, bs.Time = i, in.Start.Add(time.Duration(i)*in.Step)
		switch k := len(bs.Bad); {
		case bs.WithData < 2:
			bs.Class = Alone
			r.Scope.Alone++
		case k == 1: // before "half": one of two instances is local
			bs.Class = Local
			r.Scope.Local++
			r.Scope.LocalBy[bs.Bad[0]]++
		case 2*k >= bs.WithData:
			bs.Class = Shared
			r.Scope.Shared++
		default:
			bs.Class = Partial
			r.Scope.Partial++
		}
		r.BadSteps = append(r.BadSteps, bs)
	}
}

// decideScope sets the verdict's scope: local when local steps outnumber
// the steps with several instances bad, on the instance with the most.
func (r *Report) decideScope() {
	v, s := &r.Verdict, r.Scope
	switch {
	case len(r.BadSteps) == 0:
		v.Scope = "none"
	case s.Local+s.Partial+s.Shared == 0:
		v.Scope = "unknown"
		r.warn("only one instance had data in every bad step: shared or local cannot be told")
	case s.Local > s.Partial+s.Shared:
		v.Scope = "local"
		for name, n := range s.LocalBy {
			if n > s.LocalBy[v.Instance] || n == s.LocalBy[v.Instance] && name < v.Instance {
				v.Instance = name
			}
		}
		if len(s.LocalBy) > 1 {
			r.warn("local bad steps on %d instances; the verdict follows %s, which had the most (%d of %d)",
				len(s.LocalBy), v.Instance, s.LocalBy[v.Instance], s.Local)
		}
	default:
		v.Scope = "shared"
	}
}

// verdictSteps returns the step indices the verdict is about: the local
// instance's bad steps, or the steps with several instances bad, or
// every bad step.
func (r *Report) verdictSteps() []int {
	var idx []int
	switch r.Verdict.Scope {
	case "local":
		return r.instance(r.Verdict.Instance).Bad
	case "shared":
		for _, b := range r.BadSteps {
			if b.Class == Shared || b.Class == Partial {
				idx = append(idx, b.Index)
			}
		}
	default:
		for _, b := range r.BadSteps {
			idx = append(idx, b.Index)
		}
	}
	return idx
}

// instance returns the report of the instance named name, or nil.
func (r *Report) instance(name string) *InstanceReport {
	for i := range r.Instances {
		if r.Instances[i].Name == name {
			return &r.Instances[i]
		}
	}
	return nil
}

// hiddenStalls warns, once for the fleet, about steps that were not bad
// but in which the stall probe lost the threshold more than its late
// wake-ups usually lose, and more than its steps usually lose
// (stalledSteps: the process could not run that long
// at once), yet the signal stayed under the threshold — a stop between
// requests, or delays too few to reach the percentile. Many short late
// wake-ups (a busy host, throttling) that only sum to the threshold are
// no stall of the threshold; without the wake-up count
// (latscope_stalls_total) nothing is said.
func (r *Report) hiddenStalls(in Input, min, bar float64) {
	type hidden struct {
		name       string
		n, worstAt int
		worst      float64
	}
	var found []hidden
	total := 0
	for k, s := range in.Instances {
		stalled := stalledSteps(s, min, bar)
		if stalled == nil {
			continue
		}
		isBad := indexSet(r.Instances[k].Bad)
		h := hidden{name: s.Name}
		for i, lost := range s.Host[Stall] {
			if isBad[i] || !stalled[i] {
				continue
			}
			if h.n++; lost > h.worst {
				h.worst, h.worstAt = lost, i
			}
		}
		if h.n > 0 {
			found = append(found, h)
			total += h.n
		}
	}
	if len(found) == 0 {
		return
	}
	var parts []string
	for i, h := range found {
		if i == maxPerKind {
			parts = append(parts, fmt.Sprintf("… %d more", len(found)-maxPerKind))
			break
		}
		parts = append(parts, fmt.Sprintf("%s in %d (most %s s at %s UTC)", h.name, h.n, Sec(h.worst), r.Start.Add(time.Duration(h.worstAt)*r.Step).UTC().Format("15:04:05")))
	}
	r.warn("the stall probe woke %s or more late in %d step(s) that were not bad, on %d instance(s): %s: the process could not run that long at once, but the %s stayed under the threshold",
		r.stallText(), total, len(found), strings.Join(parts, "; "), r.SignalName())
}

// dbPath is rule 3 for one instance over the bad steps idx: a bad step
// counts as "rose" when the no-DB p95 or p99 is over its baseline by at
// least half the signal's rise over its own baseline.
func dbPath(s InstanceSeries, ir *InstanceReport, idx []int) DBPathEvidence {
	e := DBPathEvidence{Verdict: "unknown", Baseline95: math.NaN(), Baseline99: math.NaN(), BadMedian95: math.NaN(), BadMedian99: math.NaN()}
	if s.NoDB95 == nil && s.NoDB99 == nil {
		e.Reason = "no series of requests without DB calls (db=\"no\")"
		return e
	}
	isBad := indexSet(ir.Bad)
	var g95, g99 []float64
	for i, v := range s.Signal {
		if !math.IsNaN(v) && !isBad[i] {
			g95, g99 = appendValue(g95, at(s.NoDB95, i)), appendValue(g99, at(s.NoDB99, i))
		}
	}
	e.Baseline95, e.Baseline99 = median(g95, minBaseline), median(g99, minBaseline)
	if math.IsNaN(e.Baseline95) && math.IsNaN(e.Baseline99) || math.IsNaN(ir.Baseline) {
		e.Reason = fmt.Sprintf("fewer than %d good steps with requests without DB calls for a baseline", minBaseline)
		return e
	}
	held := indexSet(ir.Held)
	var b95, b99 []float64
	for _, i := range idx {
		if held[i] {
			e.Compared++
			e.Rose++
			e.Held++
			continue
		}
		n95, n99 := at(s.NoDB95, i), at(s.NoDB99, i)
		if math.IsNaN(n95) && math.IsNaN(n99) {
			continue
		}
		e.Compared++
		b95, b99 = appendValue(b95, n95), appendValue(b99, n99)
		half := (s.Signal[i] - ir.Baseline) / 2
		if n95-e.Baseline95 >= half || n99-e.Baseline99 >= half { // NaN compares false
			e.Rose++
		}
	}
	e.BadMedian95, e.BadMedian99 = median(b95, 1), median(b99, 1)
	e.decide()
	return e
}

// decide sets the verdict from Compared and Rose: all requests when at
// least half the compared bad steps rose.
func (e *DBPathEvidence) decide() {
	switch {
	case e.Compared == 0:
		e.Verdict, e.Reason = "unknown", "no p95 or p99 of requests without DB calls in the bad steps (none, or too few: a p95 needs 20 in the step)"
	case 2*e.Rose >= e.Compared:
		e.Verdict = "all-requests"
	default:
		e.Verdict = "db-only"
	}
}

// fleetDBPath is rule 3 for the verdict: the local instance's, or summed
// over the instances bad in the shared steps.
func (r *Report) fleetDBPath(in Input, idx []int) DBPathEvidence {
	if r.Verdict.Scope == "local" {
		return r.instance(r.Verdict.Instance).DBPath
	}
	sum := DBPathEvidence{Baseline95: math.NaN(), Baseline99: math.NaN(), BadMedian95: math.NaN(), BadMedian99: math.NaN()}
	in2 := make(map[int]bool, len(idx))
	for _, i := range idx {
		in2[i] = true
	}
	var reasons []string
	for k := range r.Instances {
		ir := &r.Instances[k]
		var mine []int
		for _, i := range ir.Bad {
			if in2[i] {
				mine = append(mine, i)
			}
		}
		if len(mine) == 0 {
			continue
		}
		e := dbPath(in.Instances[k], ir, mine)
		sum.Compared += e.Compared
		sum.Rose += e.Rose
		sum.Held += e.Held
		if e.Reason != "" {
			reasons = append(reasons, ir.Name+": "+e.Reason)
		}
	}
	sum.decide()
	if sum.Compared == 0 && len(reasons) > 0 {
		sum.Reason = reasons[0]
	}
	return sum
}

// RoseSDs is how many standard deviations of its good steps a host
// signal's mean in the bad steps must rise by (docs/triage.md, rule 5).
const RoseSDs = 3.0

// hostEvidence is rule 5 for one instance: each host signal's mean per
// step in the bad steps against the good steps.
func hostEvidence(s InstanceSeries, ir *InstanceReport, thr float64) []HostEvidence {
	isBad := indexSet(ir.Bad)
	var out []HostEvidence
	for sig := HostSignal(0); sig < NumHostSignals; sig++ {
		h := HostEvidence{Signal: sig, Bad: math.NaN(), Good: math.NaN()}
		series := s.Host[sig]
		if series == nil {
			h.Absent = true
			out = append(out, h)
			continue
		}
		var bad, good []float64
		for i, v := range s.Signal {
			if math.IsNaN(v) {
				continue
			}
			if isBad[i] {
				bad = appendValue(bad, at(series, i))
			} else {
				good = appendValue(good, at(series, i))
			}
		}
		h.Bad, h.Good, h.GoodSD = mean(bad, 1), mean(good, minBaseline), stddev(good, minBaseline)
		rise := h.Bad - h.Good
		h.Rose = rise >= thr && rise >= RoseSDs*h.GoodSD
		out = append(out, h)
	}
	return out
}

// cause is rule 5's conclusion: of throttled time and steal, the one that
// rose most (a quota or the hypervisor held the process, whatever it
// ran); else the garbage collector when its share of the process's CPU
// rose (gc: other work's CPU pressure, or a stop, does not raise the
// collector's share, while the collector's own CPU raises the process's
// pressure and makes the stall probe late); else the stall probe when it
// rose more than CPU pressure ("stalled": the process could not run at
// all); else CPU pressure; else the stall probe alone; else unknown.
func cause(hs []HostEvidence, gc GCEvidence) string {
	rise := func(s HostSignal) float64 {
		for _, h := range hs {
			if h.Signal == s && h.Rose {
				return h.Bad - h.Good
			}
		}
		return -1
	}
	switch t, st := rise(Throttled), rise(Steal); {
	case t >= 0 && t >= st:
		return "throttled"
	case st >= 0:
		return "steal"
	case gc.Rose && !(rise(Stall) > gcRise(gc)):
		// (a process stopped for most of a step does little but collect
		// when it resumes: its collector's share of a sliver of CPU
		// rises while the stall lost far more time than the collector
		// took, and the stall is the cause)
		return "gc"
	case rise(Stall) >= 0 && rise(Stall) > max(rise(PSICgroup), rise(PSIHost)):
		// the process lost more time than CPU pressure shows waiting for a
		// CPU: it could not run at all (a stop), and any pressure beside it
		// is other work on the host
		return "stalled"
	case rise(PSICgroup) >= 0 || rise(PSIHost) >= 0:
		return "cpu-pressure"
	case rise(Stall) >= 0:
		return "stalled"
	}
	return "unknown"
}

// gcRise is the collector's rise in CPU seconds per step, bad steps
// against good (against none without a baseline).
func gcRise(gc GCEvidence) float64 {
	good := gc.GoodCPU
	if math.IsNaN(good) {
		good = 0
	}
	return gc.BadCPU - good
}

// when is rule 4 over the bad steps idx (sorted).
func when(in Input, idx []int) WhenEvidence {
	w := WhenEvidence{PValue: math.NaN(), Alpha: PeriodAlpha}
	for _, i := range idx {
		t := in.Start.Add(time.Duration(i) * in.Step).UTC()
		w.ByMinute[t.Minute()]++
		w.ByHour[t.Hour()]++
	}
	rs := runsOf(idx)
	w.Clusters = len(rs)
	if len(rs) == 0 {
		w.Reason = "no bad steps"
		return w
	}
	w.Last = in.Start.Add(time.Duration(rs[len(rs)-1].start) * in.Step)
	w.LastEnd = in.Start.Add(time.Duration(idx[len(idx)-1]+1) * in.Step)
	res := findPeriod(idx, in.Steps)
	w.Draws = res.draws
	if res.draws > 0 {
		w.SpanFrom = in.Start.Add(time.Duration(res.spanFrom) * in.Step)
		w.SpanTo = in.Start.Add(time.Duration(res.spanTo+1) * in.Step)
	}
	best := res.best
	if best.p == 0 {
		w.Reason = res.reason
		if c := res.rejected; c.p != 0 {
			w.PValue, w.Candidate = c.pValue, time.Duration(c.p)*in.Step
			w.Reason = fmt.Sprintf("the best candidate, every %s (%d of %d runs on its phase, %d of its %d slots), has p = %s against one continuous fault from %s to %s; a period needs p ≤ %g",
				Dur(w.Candidate), c.onPhase, w.Clusters, c.hits, c.slots, PText(c.pValue), w.SpanFrom.UTC().Format("15:04:05"), w.SpanTo.UTC().Format("15:04:05"), PeriodAlpha)
			if res.alternates {
				w.Reason += fmt.Sprintf("; every gap between the runs is one step, the only way to place them, as a fault that hovers around the threshold would: a step of at most half of %s can tell them apart", Dur(in.Step))
			}
		}
		return w
	}
	w.PeriodSteps, w.Period = best.p, time.Duration(best.p)*in.Step
	w.Phase = in.Start.Add(time.Duration(best.phase) * in.Step)
	w.Hits, w.Slots, w.OnPhase, w.PValue = best.hits, best.slots, best.onPhase, best.pValue
	last := best.phase + (in.Steps-1-best.phase)/best.p*best.p
	w.Next = in.Start.Add(time.Duration(last+best.p) * in.Step)
	return w
}

// PText formats a p-value with two significant digits ("-" for none).
func PText(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// at returns xs[i], or NaN past its end or for a nil series.
func at(xs []float64, i int) float64 {
	if i < len(xs) {
		return xs[i]
	}
	return math.NaN()
}

// appendValue appends v unless it is NaN.
func appendValue(xs []float64, v float64) []float64 {
	if math.IsNaN(v) {
		return xs
	}
	return append(xs, v)
}

// median returns the median of xs, or NaN with fewer than min values.
func median(xs []float64, min int) float64 {
	if len(xs) < min || len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// stddev returns the sample standard deviation of xs, or NaN with fewer
// than min values (and fewer than 2).
func stddev(xs []float64, min int) float64 {
	if len(xs) < min || len(xs) < 2 {
		return math.NaN()
	}
	m := mean(xs, 1)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// mean returns the mean of xs, or NaN with fewer than min values.
func mean(xs []float64, min int) float64 {
	if len(xs) < min || len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
