package triage

import (
	"fmt"
	"math"
	"sort"
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
	// minOccurrences is the fewest clusters on a period's phase.
	minOccurrences = 3
	// onPhaseShare is the share of all clusters that must start on the phase.
	onPhaseShare = 0.8
	// minFill is the share of the phase's slots in the range that must
	// hold a cluster start.
	minFill = 0.5
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
	for _, s := range in.Instances {
		ir := badSteps(s, thr)
		if r.Signal == "request" {
			ir.addHeld(s, thr)
		}
		r.Instances = append(r.Instances, ir)
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
		ir.Cause = cause(ir.Host)
	}
	for i := range r.Instances {
		r.hiddenStalls(in.Instances[i], &r.Instances[i], thr)
	}
	r.DBPath = r.fleetDBPath(in, bad)
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

// maxPerKind is how many warnings of one per-instance kind are listed one
// by one; more are summed up in one line.
const maxPerKind = 3

// warnKind is a kind of per-instance warning.
type warnKind uint8

const (
	fewGood     warnKind = iota // too few good steps for a baseline
	hiddenStall                 // the stall probe lost the threshold in good steps
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
		case hiddenStall:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d instances: the stall probe lost at least %s in steps that were not bad: the processes could not run that long, but the %s stayed under the threshold (%s)", g.n, dur(r.Threshold), r.signalName(), first))
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
// signal stayed under thr is bad all the same when the stall probe's late
// wake-ups in it averaged at least thr (so at least one was thr late: the
// process could not run for that long) and requests were served in it.
// The agent times a request from its handler's start, so the requests
// that arrived while the process was held, and were read after it
// resumed, look fast; only those already in a handler show the stall.
func (ir *InstanceReport) addHeld(s InstanceSeries, thr float64) {
	if s.Stalls == nil || s.Requests == nil {
		return
	}
	isBad := indexSet(ir.Bad)
	for i, v := range s.Signal {
		lost, n, reqs := at(s.Host[Stall], i), at(s.Stalls, i), at(s.Requests, i)
		if isBad[i] || math.IsNaN(v) || !(n > 0 && lost >= thr && lost/n >= thr && reqs > 0) {
			continue
		}
		ir.Held = append(ir.Held, i)
	}
	if len(ir.Held) == 0 {
		return
	}
	ir.Bad = append(ir.Bad, ir.Held...)
	sort.Ints(ir.Bad)
	isBad = indexSet(ir.Bad)
	var good []float64
	for i, v := range s.Signal {
		if !math.IsNaN(v) && !isBad[i] {
			good = append(good, v)
		}
	}
	ir.Baseline = median(good, minBaseline)
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

// hiddenStalls warns about good steps in which the stall probe lost at
// least the threshold: the process could not run for that long, yet the
// signal stayed under the threshold (a stop between requests, or delays
// too few to reach the percentile).
func (r *Report) hiddenStalls(s InstanceSeries, ir *InstanceReport, thr float64) {
	isBad := indexSet(ir.Bad)
	n, worst, at0 := 0, 0.0, 0
	for i, v := range s.Host[Stall] {
		if v >= thr && !isBad[i] {
			if n++; v > worst {
				worst, at0 = v, i
			}
		}
	}
	if n > 0 {
		r.warnInstance(hiddenStall, ir.Name, "%s: the stall probe lost at least %s in %d step(s) that were not bad (most: %s s at %s UTC): the process could not run that long, but the %s stayed under the threshold",
			ir.Name, dur(r.Threshold), n, sec(worst), r.Start.Add(time.Duration(at0)*r.Step).UTC().Format("15:04:05"), r.signalName())
	}
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
		e.Verdict, e.Reason = "unknown", "no request without DB calls in the bad steps"
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
		h.Bad, h.Good = mean(bad, 1), mean(good, minBaseline)
		h.Rose = h.Bad-h.Good >= thr
		out = append(out, h)
	}
	return out
}

// cause is rule 5's conclusion: of throttled time and steal, the one that
// rose most; else the stall probe when it rose more than CPU pressure
// ("stalled": the process could not run at all); else CPU pressure; else
// the stall probe alone; else unknown.
func cause(hs []HostEvidence) string {
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

// when is rule 4 over the bad steps idx (sorted).
func when(in Input, idx []int) WhenEvidence {
	var w WhenEvidence
	var starts []int
	for k, i := range idx {
		t := in.Start.Add(time.Duration(i) * in.Step).UTC()
		w.ByMinute[t.Minute()]++
		w.ByHour[t.Hour()]++
		if k == 0 || idx[k-1] != i-1 {
			starts = append(starts, i)
		}
	}
	w.Clusters = len(starts)
	if len(starts) == 0 {
		w.Reason = "no bad steps"
		return w
	}
	w.Last = in.Start.Add(time.Duration(starts[len(starts)-1]) * in.Step)
	w.LastEnd = in.Start.Add(time.Duration(idx[len(idx)-1]+1) * in.Step)
	if len(starts) < minOccurrences {
		w.Reason = fmt.Sprintf("%d runs of bad steps; a period needs at least %d", len(starts), minOccurrences)
		return w
	}
	best := searchPeriod(starts, in.Steps)
	if best.p == 0 {
		w.Reason = fmt.Sprintf("no period of 2 to %d steps has %.0f %% of the %d runs on one phase, %d of them at least, and half its slots filled",
			in.Steps/minOccurrences, 100*onPhaseShare, len(starts), minOccurrences)
		return w
	}
	w.PeriodSteps, w.Period = best.p, time.Duration(best.p)*in.Step
	w.Phase = in.Start.Add(time.Duration(best.phase) * in.Step)
	w.Hits, w.Slots, w.OnPhase = best.hits, best.slots, best.onPhase
	last := best.phase + (in.Steps-1-best.phase)/best.p*best.p
	w.Next = in.Start.Add(time.Duration(last+best.p) * in.Step)
	return w
}

// period is one candidate of the period search.
type period struct {
	p, phase             int
	hits, slots, onPhase int
	fill                 float64
}

// searchPeriod finds the period p (in steps, 2 ≤ p ≤ n/minOccurrences)
// whose best phase holds at least onPhaseShare of the run starts, at
// least minOccurrences of them, and fills at least minFill of its slots in
// the range; of those, the one with the most filled slots (then the
// smallest p). A start within one step of the phase counts as on it when
// p ≥ 4 (the step grid and the fault's clock are not aligned).
func searchPeriod(starts []int, n int) period {
	var best period
	need := max(minOccurrences, int(math.Ceil(onPhaseShare*float64(len(starts))-1e-9)))
	exact := make([]int, 0, n)
	for p := 2; p*minOccurrences <= n; p++ {
		tol := 0
		if p >= 4 {
			tol = 1
		}
		exact = exact[:p]
		clear(exact)
		for _, s := range starts {
			exact[s%p]++
		}
		// The phases holding enough starts, the exact phase first (ties
		// keep it): O(p + starts) per period, then a full score for few.
		var cand []int
		for phi := range p {
			on := 0
			for d := -tol; d <= tol; d++ {
				on += exact[((phi+d)%p+p)%p]
			}
			if on >= need {
				cand = append(cand, phi)
			}
		}
		sort.SliceStable(cand, func(i, j int) bool { return exact[cand[i]] > exact[cand[j]] })
		for _, phi := range cand {
			c := phaseScore(starts, n, p, phi, tol)
			if c.onPhase >= need && c.fill >= minFill && c.fill > best.fill+1e-12 {
				best = c
			}
		}
	}
	return best
}

// phaseScore counts the starts on phase φ (mod p, within tol) and the
// slots φ+k·p in [0, n) that hold one.
func phaseScore(starts []int, n, p, phi, tol int) period {
	c := period{p: p, phase: phi}
	hit := map[int]bool{}
	for _, s := range starts {
		d := ((s-phi)%p + p) % p
		switch {
		case d <= tol:
			hit[(s-d-phi)/p] = true
		case p-d <= tol:
			hit[(s+p-d-phi)/p] = true
		default:
			continue
		}
		c.onPhase++
	}
	c.slots = (n-1-phi)/p + 1 // the slots φ+k·p in [0, n)
	for k := range hit {
		if k >= 0 && k < c.slots {
			c.hits++
		}
	}
	c.fill = float64(c.hits) / float64(c.slots)
	return c
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
