package triage

import (
	"fmt"
	"math"
)

// GCShareRise is the least rise of the collector's share of the process's
// CPU that rule 5 counts (docs/triage.md): 10 points of the process's
// CPU, on top of RoseSDs standard deviations of its good steps.
const GCShareRise = 0.10

// gcHeavyShare is the share of an instance's steps with a collection
// that must be GC-elevated over its peers for it to be "GC-heavy
// throughout": then its own steps give no baseline, its peers' do.
const gcHeavyShare = 0.75

// gcEvidence is rule 5's GC evidence for instance k: the Go runtime's
// collector's share of the process's CPU, gc / (gc + user), in the bad
// steps against a baseline. The runtime updates its CPU classes at the end
// of each collection only (runtime/metrics's CPU classes are a snapshot
// taken then), so a step without a collection adds nothing to either
// counter; summed over many steps, the counters are exact all the same.
//
// A step is GC-elevated when the instance's collector CPU is far over its
// peers' in the same step (peerOutlier: rule 1's peer test) and its share
// is at least GCShareRise over the peers' share there: the fault's own
// allocating steps, which the peer rule may leave good under load, and
// which would otherwise make the baseline. The baseline is the pooled
// share ΣGC/Σ(GC+user) of the good steps that are not elevated, its spread
// the robust standard deviation (1.4826 × MAD) of their per-step shares,
// with at least minBaseline of them having a collection. With fewer, or
// when the instance is elevated in at least gcHeavyShare of its steps with
// a collection (GC-heavy throughout), the baseline is the peers' pooled
// share in the same bad steps (in all steps when they collected in none of
// those), and their per-step shares there give the spread. The bad
// steps' share is their GC CPU summed over their GC and user CPU summed;
// BadCPU and GoodCPU are the instance's own collector CPU per step, in the
// bad steps and in the good steps the baseline keeps.
func gcEvidence(in Input, k int, ir *InstanceReport) GCEvidence {
	s := in.Instances[k]
	e := GCEvidence{Bad: math.NaN(), Good: math.NaN(), GoodSD: math.NaN(), BadCPU: math.NaN(), GoodCPU: math.NaN()}
	if s.GCCPU == nil || s.UserCPU == nil {
		e.Absent = true
		return e
	}
	elevated := gcElevated(in, k)
	isBad := indexSet(ir.Bad)
	var bad, good gcSum
	var shares, badCPU, goodCPU []float64
	collected := 0
	for i, v := range s.Signal {
		gc, user := at(s.GCCPU, i), at(s.UserCPU, i)
		if math.IsNaN(v) || math.IsNaN(gc) || math.IsNaN(user) {
			continue
		}
		if gc+user > 0 {
			collected++
			if elevated[i] {
				e.Elevated++
			}
		}
		if isBad[i] {
			bad.add(gc, user)
			badCPU = append(badCPU, gc)
			continue
		}
		if elevated[i] {
			e.LeftOut++
			continue
		}
		good.add(gc, user)
		goodCPU = append(goodCPU, gc)
		if gc+user > 0 {
			shares = append(shares, gc/(gc+user))
		}
	}
	e.Collected = collected
	e.Bad, e.BadCPU, e.GoodCPU = bad.share(), mean(badCPU, 1), mean(goodCPU, minBaseline)
	e.Throughout = collected > 0 && float64(e.Elevated) >= gcHeavyShare*float64(collected)
	if len(shares) >= minBaseline && !e.Throughout {
		e.Good = good.share()
		e.GoodSD = robustSD(shares)
	} else {
		e.Peers = true
		e.Good, e.GoodSD = peersGCShare(in, k, ir.Bad)
		if math.IsNaN(e.Good) {
			// none of them collected in the bad steps: all their steps
			e.Good, e.GoodSD = peersGCShare(in, k, allSteps(in.Steps))
		}
	}
	rise := e.Bad - e.Good
	e.Rose = rise >= GCShareRise && rise >= RoseSDs*e.GoodSD
	return e
}

// robustSD is 1.4826 × the median absolute deviation of xs from their
// median (NaN with fewer than minBaseline).
func robustSD(xs []float64) float64 {
	m := median(xs, minBaseline)
	if math.IsNaN(m) {
		return math.NaN()
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return 1.4826 * median(dev, 1)
}

// peersGCShare is the other instances' pooled collector share over the
// steps idx, and the robust standard deviation of their per-step shares
// there (NaN: fewer than minBaseline).
func peersGCShare(in Input, k int, idx []int) (share, sd float64) {
	var sum gcSum
	var shares []float64
	for j, o := range in.Instances {
		if j == k || o.GCCPU == nil || o.UserCPU == nil {
			continue
		}
		for _, i := range idx {
			gc, user := at(o.GCCPU, i), at(o.UserCPU, i)
			if math.IsNaN(gc) || math.IsNaN(user) {
				continue
			}
			sum.add(gc, user)
			if gc+user > 0 {
				shares = append(shares, gc/(gc+user))
			}
		}
	}
	return sum.share(), robustSD(shares)
}

// gcElevated marks the steps in which instance k's collector CPU is far
// over the other instances' (peerOutlier, with at least minPeers of them
// reporting) and its share at least GCShareRise over their pooled share
// in the step (over their pooled share in all steps when none of them
// collected in it).
func gcElevated(in Input, k int) map[int]bool {
	s := in.Instances[k]
	out := map[int]bool{}
	every := make([]int, in.Steps)
	for i := range every {
		every[i] = i
	}
	all, _ := peersGCShare(in, k, every) // the fallback when no peer collected in a step
	var others []float64
	for i := range in.Steps {
		gc, user := at(s.GCCPU, i), at(s.UserCPU, i)
		if !(gc+user > 0) {
			continue
		}
		others = others[:0]
		var step gcSum
		for j, o := range in.Instances {
			if og, ou := at(o.GCCPU, i), at(o.UserCPU, i); j != k && !math.IsNaN(og) && !math.IsNaN(ou) {
				others = append(others, og)
				step.add(og, ou)
			}
		}
		if len(others) < minPeers || !peerOutlier(gc, others) {
			continue
		}
		ps := step.share()
		if math.IsNaN(ps) {
			ps = all
		}
		if share := gc / (gc + user); math.IsNaN(ps) && share >= GCShareRise || share-ps >= GCShareRise {
			out[i] = true
		}
	}
	return out
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
	s := fmt.Sprintf("GC %s → %s of the process's CPU (%s → %s s/step)", Pct(e.Good), Pct(e.Bad), Sec(e.GoodCPU), Sec(e.BadCPU))
	switch {
	case e.Throughout:
		s += fmt.Sprintf(", GC-heavy throughout: far over its peers' collectors in %d of its %d steps with a collection, so the baseline is the other instances' share", e.Elevated, e.Collected)
	case e.Peers && math.IsNaN(e.Good):
		return s + fmt.Sprintf(", no baseline: fewer than %d good steps with a collection (not far over the peers'), and no other instance's share", minBaseline)
	case e.Peers:
		s += fmt.Sprintf(", the other instances' share as the baseline: fewer than %d good steps with a collection not far over the peers'", minBaseline)
	case e.LeftOut > 0:
		s += fmt.Sprintf(", leaving out of the baseline %d good step(s) far over its peers' collectors", e.LeftOut)
	}
	switch {
	case math.IsNaN(e.Good):
		s += ", no baseline"
	case !e.Rose:
		s += ", not risen"
	}
	return s
}

// Pct formats a share as a whole percentage, "-" for NaN.
func Pct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}
