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
// the baseline and of the value (NaN: none).
type Rise struct {
	Compared, Rose int
	Baseline, Bad  float64
}

// rose says whether at least half the compared pairs rose.
func (r Rise) rose() bool { return r.Compared > 0 && 2*r.Rose >= r.Compared }

// OutboundRise is Rise for one route's outbound time (and one peer, where
// the metric is labelled with one), summed over the instances.
type OutboundRise struct {
	Route, Peer string
	Rise
}

// name is "GET /quote", or "GET /quote → peer" with a peer label.
func (o OutboundRise) name() string {
	if o.Peer == "" {
		return o.Route
	}
	return o.Route + " → " + o.Peer
}

// DependencyEvidence is rule 3's second half: which dependency the
// verdict's bad steps slowed on.
type DependencyEvidence struct {
	Kind Dependency
	// DB is the DB-call p95's rise (the signal itself with the DB
	// signal); Outbound the rise of each route's outbound p95 that had a
	// value in the bad steps, the one named first.
	DB       Rise
	Outbound []OutboundRise
	// Reason says in words why Kind was chosen.
	Reason string
}

// named returns the outbound series Kind names (nil unless DepOutbound).
func (e *DependencyEvidence) named() *OutboundRise {
	if e.Kind != DepOutbound || len(e.Outbound) == 0 {
		return nil
	}
	return &e.Outbound[0]
}

// dependency is rule 3's second half over the verdict's bad steps idx:
// the DB-call p95 and each route's outbound p95, compared with the
// instance's good steps in each (instance, bad step) pair, as requests
// without DB calls are (dbPath), then:
//
//   - the DB calls rose, the outbound calls did not, and requests without
//     DB calls did not slow (or nothing says): the database;
//   - a route's outbound calls rose and the DB calls did not: that
//     outbound dependency (its route, and its peer where labelled);
//   - both rose, or neither did while every request slowed (rule 3
//     all-requests) or the process was held: the host (or the process);
//   - else unknown.
func (r *Report) dependency(in Input, idx []int) DependencyEvidence {
	e := DependencyEvidence{DB: Rise{Baseline: math.NaN(), Bad: math.NaN()}}
	steps := indexSet(idx)
	var dbBase, dbBad []float64
	type acc struct {
		OutboundRise
		base, bad []float64
	}
	outs := map[[2]string]*acc{}
	for k := range r.Instances {
		ir := &r.Instances[k]
		if math.IsNaN(ir.Baseline) {
			continue
		}
		s := in.Instances[k]
		good := r.goodSteps(ir)
		db := s.DBCall
		if db == nil && r.Signal != "request" {
			db = s.Signal
		}
		db = mask(db, s.DBCalls, voteNeed(0.95))
		dbB := median(pick(db, good), minBaseline)
		type oser struct {
			key  [2]string
			p95  []float64
			base float64
		}
		var os []oser
		for _, o := range s.Outbound {
			p := mask(o.P95, o.Count, voteNeed(0.95))
			os = append(os, oser{[2]string{o.Route, o.Peer}, p, median(pick(p, good), minBaseline)})
		}
		for _, i := range ir.Bad {
			if !steps[i] {
				continue
			}
			half := (at(ir.Signal, i) - ir.Baseline) / 2
			if v := at(db, i); !math.IsNaN(v) && !math.IsNaN(dbB) {
				e.DB.Compared++
				dbBase, dbBad = append(dbBase, dbB), append(dbBad, v)
				if v-dbB >= half {
					e.DB.Rose++
				}
			}
			for _, o := range os {
				v := at(o.p95, i)
				if math.IsNaN(v) || math.IsNaN(o.base) {
					continue
				}
				a := outs[o.key]
				if a == nil {
					a = &acc{OutboundRise: OutboundRise{Route: o.key[0], Peer: o.key[1]}}
					outs[o.key] = a
				}
				a.Compared++
				a.base, a.bad = append(a.base, o.base), append(a.bad, v)
				if v-o.base >= half {
					a.Rose++
				}
			}
		}
	}
	e.DB.Baseline, e.DB.Bad = median(dbBase, 1), median(dbBad, 1)
	for _, a := range outs {
		a.Baseline, a.Bad = median(a.base, 1), median(a.bad, 1)
		e.Outbound = append(e.Outbound, a.OutboundRise)
	}
	// The route that rose in most pairs first, then the largest rise.
	sort.Slice(e.Outbound, func(i, j int) bool {
		a, b := e.Outbound[i], e.Outbound[j]
		if a.rose() != b.rose() {
			return a.rose()
		}
		if a.Rose != b.Rose {
			return a.Rose > b.Rose
		}
		if da, db := a.Bad-a.Baseline, b.Bad-b.Baseline; da != db {
			return da > db
		}
		return a.name() < b.name()
	})
	e.decide(r.DBPath)
	return e
}

// decide sets Kind and Reason from the rises and rule 3's DB-path verdict.
func (e *DependencyEvidence) decide(p DBPathEvidence) {
	out := len(e.Outbound) > 0 && e.Outbound[0].rose()
	db := e.DB.rose()
	switch {
	case db && !out && p.Verdict != "all-requests":
		e.Kind = DepDatabase
		e.Reason = fmt.Sprintf("the DB calls slowed: DB-call p95 %s → %s, in %d (instance, bad step) pairs of %d", ms(e.DB.Baseline), ms(e.DB.Bad), e.DB.Rose, e.DB.Compared)
		if len(e.Outbound) > 0 {
			e.Reason += ", the outbound calls did not"
		}
	case out && !db:
		o := e.Outbound[0]
		e.Kind = DepOutbound
		e.Reason = fmt.Sprintf("its outbound calls slowed: outbound p95 %s → %s, in %d (instance, bad step) pairs of %d", ms(o.Baseline), ms(o.Bad), o.Rose, o.Compared)
		if e.DB.Compared > 0 {
			e.Reason += fmt.Sprintf("; the DB calls did not: DB-call p95 %s → %s", ms(e.DB.Baseline), ms(e.DB.Bad))
		}
	case out && db:
		e.Kind = DepHost
		e.Reason = fmt.Sprintf("the DB calls and the outbound calls of %s slowed together: the process or its host delays both", e.Outbound[0].name())
	case p.Verdict == "all-requests" && p.Held > 0:
		e.Kind = DepHost
		e.Reason = "the process was held: every request waited"
	case p.Verdict == "all-requests":
		e.Kind = DepHost
		e.Reason = "every request slowed, with DB calls or without"
		if len(e.Outbound) > 0 {
			e.Reason += ", and no route's outbound calls explain it"
		}
	default:
		e.Kind = DepUnknown
		e.Reason = "neither the DB calls nor any route's outbound calls rose by half the signal's rise"
		if e.DB.Compared == 0 && len(e.Outbound) == 0 {
			e.Reason = "no DB-call or outbound series in the bad steps"
		}
	}
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
	// in up to three quarters of them leaves it alone), Worst its highest
	// (seconds).
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
	seen := map[string]bool{}
	outs := map[[2]string]*OutboundSlowed{}
	var keys [][2]string
	for k, s := range in.Instances {
		bad := indexSet(r.Instances[k].Bad)
		for i := range s.Requests {
			if a, n := at(s.Requests, i), at(s.NoDBCount, i); !math.IsNaN(a) && !math.IsNaN(n) {
				all, noDB = all+a, noDB+n
			}
		}
		p95 := mask(s.NoDB95, s.NoDBCount, voteNeed(0.95))
		if n := slowedSteps(p95, thr, bad); n > 0 {
			u.Slowed += n
			if !seen[s.Name] {
				seen[s.Name] = true
				u.Instances = append(u.Instances, s.Name)
			}
		}
		for _, o := range s.Outbound {
			p := mask(o.P95, o.Count, voteNeed(0.95))
			n := slowedSteps(p, thr, bad)
			if n == 0 {
				continue
			}
			k := [2]string{o.Route, o.Peer}
			os := outs[k]
			if os == nil {
				os = &OutboundSlowed{Route: o.Route, Peer: o.Peer, Baseline: quartile(pick(p, allSteps(len(p)))), Worst: math.Inf(-1)}
				outs[k] = os
				keys = append(keys, k)
			}
			os.Steps += n
			for _, v := range p {
				if v > os.Worst {
					os.Worst = v
				}
			}
		}
	}
	if all > 0 {
		u.Share = noDB / all
	}
	for _, k := range keys {
		u.Outbound = append(u.Outbound, *outs[k])
	}
	sort.SliceStable(u.Outbound, func(i, j int) bool { return u.Outbound[i].Steps > u.Outbound[j].Steps })
	return u
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

// unwatchedPhrase says what the DB-call signal did not watch, and whether
// it slowed meanwhile ("" with --signal request).
func (r *Report) unwatchedPhrase() string {
	u := r.Unwatched
	if u == nil {
		return ""
	}
	share := "requests without DB calls"
	if !math.IsNaN(u.Share) {
		share = fmt.Sprintf("requests without DB calls (%.0f %% of the requests)", 100*u.Share)
	}
	if u.Slowed == 0 && len(u.Outbound) == 0 {
		return fmt.Sprintf("not watched by the %s: %s; none of them slowed by %s over their quietest quarter of the steps (--signal request judges every request)", r.signalName(), share, dur(r.Threshold))
	}
	var parts []string
	if u.Slowed > 0 {
		parts = append(parts, fmt.Sprintf("their p95 rose by %s or more over its quietest quarter in %d instance-step(s) on %s", dur(r.Threshold), u.Slowed, names(u.Instances)))
	}
	for k, o := range u.Outbound {
		if k == maxPerKind {
			parts = append(parts, fmt.Sprintf("… %d more route(s)", len(u.Outbound)-maxPerKind))
			break
		}
		parts = append(parts, fmt.Sprintf("the outbound calls of %s rose by %s or more in %d instance-step(s) (outbound p95 %s in the quietest quarter of the steps, %s at worst)",
			OutboundRise{Route: o.Route, Peer: o.Peer}.name(), dur(r.Threshold), o.Steps, ms(o.Baseline), ms(o.Worst)))
	}
	return fmt.Sprintf("not watched by the %s: %s, and they slowed: %s; run again with --signal request to judge every request", r.signalName(), share, strings.Join(parts, "; "))
}
