package triage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Rule 4's period: a description that must also pass a test
// (docs/triage.md, "4. When").
const (
	// minOccurrences is the fewest runs on a period's phase.
	minOccurrences = 3
	// onPhaseShare is the share of all runs that must start on the phase.
	onPhaseShare = 0.8
	// minFill is the share of the phase's slots in the range that must
	// hold a run start.
	minFill = 0.5
	// PeriodAlpha is the level of the period test: a period is claimed
	// only when a continuous fault over the same span gives runs at least
	// as periodic with probability PeriodAlpha or less.
	PeriodAlpha = 0.01
	// PeriodDraws is the number of Monte Carlo draws of the test's null.
	PeriodDraws = 999
	// periodSeed seeds the draws: the same bad steps give the same p-value.
	periodSeed = 0x1a75c09e
)

// run is a run of consecutive bad steps.
type run struct{ start, n int }

// runsOf returns the runs of consecutive steps in idx (sorted).
func runsOf(idx []int) []run {
	var rs []run
	for k, i := range idx {
		if k > 0 && idx[k-1] == i-1 {
			rs[len(rs)-1].n++
			continue
		}
		rs = append(rs, run{start: i, n: 1})
	}
	return rs
}

// period is one candidate of the period search: a period p and phase φ
// (steps), the runs starting on the phase, the slots φ+k·p in the range
// and how many of them hold such a start, its score and its p-value.
type period struct {
	p, phase             int
	hits, slots, onPhase int
	exact                int // runs exactly on the phase
	fill                 float64
	// score is −ln P(Bin(slots, π) ≥ hits), with π the chance that a
	// slot's window holds a run start at the runs' density: the rank of
	// a candidate across periods, whose null distribution the test draws.
	score float64
	// pValue is the Monte Carlo p-value of score against the maximum
	// score of runs placed at random in the same span (NaN: not tested).
	pValue float64
}

// tolerance is how far (steps) a run may start from the phase and count
// as on it: one step once the window covers at most 3/8 of the phases
// (the fault's clock and the step grid are not aligned), none below.
func tolerance(p int) int {
	if p >= 8 {
		return 1
	}
	return 0
}

// periodSearch is the descriptive search over one range of n steps, with
// buffers reused across the test's draws.
type periodSearch struct {
	n, pmax int
	cnt     []int
	touched []int
	mark    []uint32
	stamp   uint32
	// divs[m] are the divisors of m from 2 to pmax; votes, voted and
	// pair are the periods' votes of periods().
	divs    [][]int32
	votes   []int
	voted   []int
	pair    []uint32
	pairID  uint32
	periods []int
	// noPruning checks every period (the tests compare).
	noPruning bool
}

// newPeriodSearch prepares the search over a range of n steps for runs
// that start within a span of span steps.
func newPeriodSearch(n, span int) *periodSearch {
	// minOccurrences starts on one phase lie (minOccurrences−1)·p − 2·tol
	// apart or more, within the span.
	pmax := min(n/minOccurrences, (span-1+2)/(minOccurrences-1))
	ps := &periodSearch{n: n, pmax: pmax, cnt: make([]int, max(pmax, 1)), mark: make([]uint32, n/2+2),
		divs: make([][]int32, span+3), votes: make([]int, max(pmax+1, 1)), pair: make([]uint32, max(pmax+1, 1))}
	for q := 2; q <= pmax; q++ {
		for m := q; m < len(ps.divs); m += q {
			ps.divs[m] = append(ps.divs[m], int32(q))
		}
	}
	return ps
}

// candidatePeriods returns the periods from 2 to pmax on which need of
// the starts could lie on one phase, in increasing order. It needs no
// division per start and period: two consecutive starts both on a phase
// of p lie k·p + e apart with |e| ≤ 2·tolerance(p), and with need of the
// starts on the phase, at least 2·need − len(starts) − 1 consecutive
// pairs are both on it. So a period that fewer pairs vote for (a pair
// votes for the divisors of its distance ± 2·tolerance) cannot qualify.
func (ps *periodSearch) candidatePeriods(starts []int, need int) []int {
	least := 2*need - len(starts) - 1
	wide := 0 // pairs 1 or 2 steps apart: on one phase of any p ≥ 8 (k = 0)
	ps.periods = ps.periods[:0]
	for i := 1; i < len(starts); i++ {
		d := starts[i] - starts[i-1]
		ps.pairID++
		all := d <= 2
		if all {
			wide++
		}
		for e := -2; e <= 2; e++ {
			m := d - e
			if m < 2 || m >= len(ps.divs) {
				continue
			}
			for _, q := range ps.divs[m] {
				if 2*tolerance(int(q)) < abs(e) || all && q >= 8 || ps.pair[q] == ps.pairID {
					continue
				}
				ps.pair[q] = ps.pairID
				if ps.votes[q] == 0 {
					ps.voted = append(ps.voted, int(q))
				}
				ps.votes[q]++
			}
		}
	}
	for p := 2; p <= ps.pmax; p++ {
		v := ps.votes[p]
		if p >= 8 {
			v += wide
		}
		if v >= least || ps.noPruning {
			ps.periods = append(ps.periods, p)
		}
	}
	for _, q := range ps.voted {
		ps.votes[q] = 0
	}
	ps.voted = ps.voted[:0]
	return ps.periods
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// candidates returns, per period p from 2 to pmax, the phase with the
// most runs on it, when it holds need of them and fills minFill of its
// slots. With stopAt finite it returns as soon as a candidate scores at
// least stopAt (a draw of the test that already beats every observed
// candidate needs no more).
func (ps *periodSearch) candidates(starts []int, stopAt float64) []period {
	var out []period
	need := max(minOccurrences, int(math.Ceil(onPhaseShare*float64(len(starts))-1e-9)))
	if len(starts) < need {
		return nil
	}
	for _, p := range ps.candidatePeriods(starts, need) {
		tol := tolerance(p)
		ps.touched = ps.touched[:0]
		for _, s := range starts {
			r := s % p
			for d := -tol; d <= tol; d++ {
				phi := ((r+d)%p + p) % p
				if ps.cnt[phi] == 0 {
					ps.touched = append(ps.touched, phi)
				}
				ps.cnt[phi]++
			}
		}
		var best period
		for _, phi := range ps.touched {
			if ps.cnt[phi] < need {
				continue
			}
			c := ps.phaseScore(starts, p, phi, tol)
			if c.onPhase < need || c.fill < minFill-1e-12 {
				continue
			}
			if best.p == 0 || better(c, best) {
				best = c
			}
		}
		for _, phi := range ps.touched {
			ps.cnt[phi] = 0
		}
		if best.p != 0 {
			best.score = ps.score(best, tol, len(starts))
			out = append(out, best)
			if best.score >= stopAt {
				return out
			}
		}
	}
	return out
}

// better orders two phases of one period: more runs on the phase, then
// more slots filled, then more runs exactly on it (not a step off), then
// the earlier phase.
func better(a, b period) bool {
	switch {
	case a.onPhase != b.onPhase:
		return a.onPhase > b.onPhase
	case a.hits != b.hits:
		return a.hits > b.hits
	case a.exact != b.exact:
		return a.exact > b.exact
	}
	return a.phase < b.phase
}

// phaseScore counts the starts on phase φ (mod p, within tol) and the
// slots φ+k·p in [0, n) that hold one.
func (ps *periodSearch) phaseScore(starts []int, p, phi, tol int) period {
	c := period{p: p, phase: phi, pValue: math.NaN()}
	c.slots = (ps.n-1-phi)/p + 1 // the slots φ+k·p in [0, n)
	ps.stamp++
	for _, s := range starts {
		d := ((s-phi)%p + p) % p
		var k int
		switch {
		case d <= tol:
			k = (s - d - phi) / p
		case p-d <= tol:
			k = (s + p - d - phi) / p
		default:
			continue
		}
		c.onPhase++
		if d == 0 {
			c.exact++
		}
		if k >= 0 && k < c.slots && ps.mark[k] != ps.stamp {
			ps.mark[k] = ps.stamp
			c.hits++
		}
	}
	c.fill = float64(c.hits) / float64(c.slots)
	return c
}

// score is −ln P(Bin(slots, π) ≥ hits), π = min(1, (2·tol+1)·runs/n).
func (ps *periodSearch) score(c period, tol, runs int) float64 {
	pi := math.Min(1, float64((2*tol+1)*runs)/float64(ps.n))
	return -logBinomTail(c.hits, c.slots, pi)
}

// logBinomTail is ln P(X ≥ h) for X ~ Bin(s, π).
func logBinomTail(h, s int, pi float64) float64 {
	if h <= 0 || pi >= 1 {
		return 0
	}
	if h > s || pi <= 0 {
		return math.Inf(-1)
	}
	lp, lq := math.Log(pi), math.Log1p(-pi)
	ls, _ := math.Lgamma(float64(s + 1))
	term := func(k int) float64 {
		a, _ := math.Lgamma(float64(k + 1))
		b, _ := math.Lgamma(float64(s - k + 1))
		return ls - a - b + float64(k)*lp + float64(s-k)*lq
	}
	top := math.Inf(-1)
	terms := make([]float64, 0, s-h+1)
	for k := h; k <= s; k++ {
		t := term(k)
		terms = append(terms, t)
		top = math.Max(top, t)
	}
	var sum float64
	for _, t := range terms {
		sum += math.Exp(t - top)
	}
	return top + math.Log(sum)
}

// periodResult is rule 4's period: the chosen period (p 0: none), the
// best candidate that did not pass when none did, and how it was tested.
type periodResult struct {
	best     period
	rejected period // the most significant candidate, when none passed
	// spanFrom and spanTo are the first and last bad step; draws the
	// Monte Carlo draws made (fewer than PeriodDraws when the test
	// stopped once no candidate could pass).
	spanFrom, spanTo, draws int
	reason                  string
	// alternates is set when every gap between the runs is one step: no
	// other placement of the runs exists, so the test cannot reject.
	alternates bool
}

// findPeriod is rule 4's period over the bad steps idx (sorted) of a
// range of n steps.
//
// Description: each period p and phase φ count the runs of bad steps that
// start on φ mod p (within tolerance(p)) and the slots φ+k·p in the range
// that hold such a start; a candidate has at least onPhaseShare of the
// runs, and minOccurrences, on its phase and fills minFill of its slots.
//
// Test: the null hypothesis is one continuous fault over the span from
// the first bad step to the last, whose signal hovers around the
// threshold: its bad steps come in runs, and the runs fall anywhere in the
// span. Given the runs' lengths, every order of the runs and every way of
// spreading the span's good steps between them (each gap at least one)
// is equally likely. That is the exact conditional law when each step is
// bad independently at one rate (the run lengths given), and it holds as
// well when the hovering signal's bad steps cluster, which a law
// conditioned on the number of bad steps alone would take for structure.
// The draws shuffle the runs and cut the good steps into gaps uniformly
// (a uniform composition). The statistic is the highest score over every
// period and phase that meets the description, so the search over periods
// and phases is in the null distribution; a candidate's p-value is
// (1 + draws whose statistic reaches its score) / (1 + draws), over
// PeriodDraws seeded draws. Of the candidates with p-value ≤ PeriodAlpha,
// the one with the most runs on its phase wins, then the one that fills
// more of its slots, then the smallest period.
func findPeriod(idx []int, n int) periodResult {
	rs := runsOf(idx)
	var res periodResult
	if len(rs) < minOccurrences {
		res.reason = fmt.Sprintf("%d runs of bad steps; a period needs at least %d", len(rs), minOccurrences)
		return res
	}
	res.spanFrom, res.spanTo = idx[0], idx[len(idx)-1]
	span := res.spanTo - res.spanFrom + 1
	starts := make([]int, len(rs))
	lengths := make([]int, len(rs))
	gaps := span // the good steps of the span
	for i, r := range rs {
		starts[i], lengths[i] = r.start, r.n
		gaps -= r.n
	}
	ps := newPeriodSearch(n, span)
	obs := ps.candidates(starts, math.Inf(1))
	if len(obs) == 0 {
		res.reason = fmt.Sprintf("no period of 2 to %d steps has %.0f %% of the %d runs on one phase, %d of them at least, and half its slots filled",
			n/minOccurrences, 100*onPhaseShare, len(rs), minOccurrences)
		return res
	}
	top := math.Inf(-1)
	for _, c := range obs {
		top = math.Max(top, c.score)
	}
	exceed := make([]int, len(obs))
	rng := rand.New(rand.NewPCG(periodSeed, uint64(n)<<32|uint64(len(idx))))
	// Besag and Clifford's sequential stop: once even the best candidate
	// has more exceedances than a p-value of PeriodAlpha allows, none can
	// pass, and the draws stop.
	allowed := int(math.Floor(PeriodAlpha*float64(PeriodDraws+1)+1e-9)) - 1
	cuts := make([]bool, gaps)
	drawn := make([]int, len(rs))
	for res.draws < PeriodDraws {
		res.draws++
		drawRuns(rng, lengths, gaps, res.spanFrom, cuts, drawn)
		t := math.Inf(-1)
		for _, c := range ps.candidates(drawn, top) {
			t = math.Max(t, c.score)
		}
		for i, c := range obs {
			if t >= c.score-1e-9 {
				exceed[i]++
			}
		}
		if minInt(exceed) > allowed {
			break
		}
	}
	var pass []period
	for i := range obs {
		obs[i].pValue = float64(1+exceed[i]) / float64(1+res.draws)
		if obs[i].pValue <= PeriodAlpha+1e-12 {
			pass = append(pass, obs[i])
		}
	}
	if len(pass) == 0 {
		sort.SliceStable(obs, func(i, j int) bool { return obs[i].score > obs[j].score })
		res.rejected = obs[0]
		res.alternates = gaps == len(rs)-1
		return res
	}
	sort.SliceStable(pass, func(i, j int) bool {
		a, b := pass[i], pass[j]
		if a.onPhase != b.onPhase {
			return a.onPhase > b.onPhase
		}
		if math.Abs(a.fill-b.fill) > 1e-12 {
			return a.fill > b.fill
		}
		return a.p < b.p
	})
	res.best = pass[0]
	return res
}

// drawRuns is one draw of the null: the runs of the given lengths in a
// random order from step `from`, with the span's gaps good steps cut into
// len(lengths)−1 gaps of at least one, every such cut equally likely
// (len(lengths)−2 distinct cut points among 1 … gaps−1, by Floyd's
// sampling). It writes the runs' starts, sorted, to starts; cut is
// scratch space of gaps marks.
func drawRuns(rng *rand.Rand, lengths []int, gaps, from int, cut []bool, starts []int) {
	rng.Shuffle(len(lengths), func(i, j int) { lengths[i], lengths[j] = lengths[j], lengths[i] })
	clear(cut)
	m, k := gaps-1, len(lengths)-2
	for j := m - k + 1; j <= m; j++ {
		t := 1 + rng.IntN(j)
		if cut[t] {
			t = j
		}
		cut[t] = true
	}
	pos, r := from, 0
	starts[0] = pos
	pos += lengths[0]
	for g := 1; g <= gaps; g++ { // good step g of the span, then a cut after it?
		pos++
		if g < gaps && !cut[g] {
			continue
		}
		r++
		starts[r] = pos
		pos += lengths[r]
	}
}

func minInt(xs []int) int {
	m := math.MaxInt
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}
