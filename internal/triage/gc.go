package triage

import (
	"fmt"
	"math"
)

// gcShareRise is the least rise of the collector's share of the process's
// CPU that rule 5 counts (docs/triage.md): 10 points of the process's
// CPU, on top of roseSDs standard deviations of its good steps.
const gcShareRise = 0.10

// gcEvidence is rule 5's GC evidence for one instance: the Go runtime's
// collector's share of the process's CPU, gc / (gc + user), in the bad
// steps against the good steps. The runtime updates its CPU classes at
// the end of each collection only (runtime/metrics's CPU classes are a
// snapshot taken then), so a step without a collection adds nothing to
// either counter and has no share; a step's share is that of the time
// since the collection before. The baseline is the median share of the
// good steps that have one (a good step inside the fault, under the
// threshold, does not move it), its spread their robust standard deviation
// (1.4826 × the median absolute deviation); the bad steps' share is their
// GC CPU summed over their GC and user CPU summed.
func gcEvidence(s InstanceSeries, ir *InstanceReport) GCEvidence {
	e := GCEvidence{Bad: math.NaN(), Good: math.NaN(), GoodSD: math.NaN(), BadCPU: math.NaN(), GoodCPU: math.NaN()}
	if s.GCCPU == nil || s.UserCPU == nil {
		e.Absent = true
		return e
	}
	isBad := indexSet(ir.Bad)
	var bad gcSum
	var shares, badCPU, goodCPU []float64
	for i, v := range s.Signal {
		gc, user := at(s.GCCPU, i), at(s.UserCPU, i)
		if math.IsNaN(v) || math.IsNaN(gc) || math.IsNaN(user) {
			continue
		}
		if isBad[i] {
			bad.add(gc, user)
			badCPU = append(badCPU, gc)
			continue
		}
		goodCPU = append(goodCPU, gc)
		if gc+user > 0 {
			shares = append(shares, gc/(gc+user))
		}
	}
	e.Bad, e.BadCPU, e.GoodCPU = bad.share(), mean(badCPU, 1), mean(goodCPU, minBaseline)
	e.Good = median(shares, minBaseline)
	if !math.IsNaN(e.Good) {
		for k := range shares {
			shares[k] = math.Abs(shares[k] - e.Good)
		}
		e.GoodSD = 1.4826 * median(shares, 1)
	}
	rise := e.Bad - e.Good
	e.Rose = rise >= gcShareRise && rise >= roseSDs*e.GoodSD
	return e
}

// gcShares is the collector's share of the process's CPU per step: NaN in
// a step without a collection (nothing counted), nil when absent.
func gcShares(s InstanceSeries) []float64 {
	if s.GCCPU == nil || s.UserCPU == nil {
		return nil
	}
	out := make([]float64, len(s.Signal))
	for i := range out {
		gc, user := at(s.GCCPU, i), at(s.UserCPU, i)
		out[i] = math.NaN()
		if gc+user > 0 { // NaN compares false
			out[i] = gc / (gc + user)
		}
	}
	return out
}

// gcSum sums the steps' GC and user CPU.
type gcSum struct{ gc, user float64 }

func (g *gcSum) add(gc, user float64) { g.gc, g.user = g.gc+gc, g.user+user }

// share is the collector's share of the summed CPU (NaN without CPU).
func (g gcSum) share() float64 {
	if !(g.gc+g.user > 0) {
		return math.NaN()
	}
	return g.gc / (g.gc + g.user)
}

// gcPhrase says the GC evidence in words: the share before → during and
// the collector's CPU per step, or that GC cannot be told apart.
func gcPhrase(e GCEvidence) string {
	if e.Absent {
		return "GC cannot be told apart: no latscope_go_gc_cpu_seconds_total or latscope_go_user_cpu_seconds_total (an agent from before issue #35)"
	}
	s := fmt.Sprintf("GC %s → %s of the process's CPU (%s → %s s/step)", pct(e.Good), pct(e.Bad), sec(e.GoodCPU), sec(e.BadCPU))
	switch {
	case math.IsNaN(e.Good):
		s += fmt.Sprintf(", no baseline: fewer than %d good steps with a collection", minBaseline)
	case !e.Rose:
		s += ", not risen"
	}
	return s
}

// pct formats a share as a whole percentage, "-" for NaN.
func pct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}
