package jvm

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// account books one request.
func (d *reqData) account(acc *reqAcc, r reqRec, ms []member, req *critpath.Request, sc *critpath.Scratch, preds []budget.Prediction, used map[int32]bool, out *reqOutcome) {
	lat := r.end - r.start
	if r.queue >= 0 {
		acc.queue = append(acc.queue, r.queue)
		acc.outer = append(acc.outer, r.queue+lat)
	}
	acc.workers = max(acc.workers, r.workers)
	seen := map[int32]bool{}
	committed, joins := 0, false
	for i := range req.Gs {
		g := &req.Gs[i]
		if !g.Committed {
			continue
		}
		committed++
		for _, s := range g.Segs {
			if s.Term == critpath.NoTerm {
				continue
			}
			t := int32(s.Term)
			acc.Wait(s.Term, s.Dur())
			acc.regionWall[d.regions.id(d.terms.list[t].Path)] += s.Dur()
			seen[t], used[t] = true, true
			joins = joins || s.Waker >= 0
			if s.Waker < 0 && isFutureWait(d.terms.list[t].Mechanism) {
				out.unwrapped++
				out.unwrappedWait += s.Dur()
			}
		}
		m := ms[i]
		td := d.threads[m.thread]
		if td == nil {
			continue
		}
		j := sort.Search(len(td.samples), func(j int) bool { return td.samples[j].t >= m.start })
		for ; j < len(td.samples) && td.samples[j].t < m.end; j++ {
			acc.samples++
			acc.regionCPU[td.samples[j].region]++
		}
	}
	defer func() { // after accountHolds
		for t := range seen {
			acc.Met(critpath.TermID(t))
		}
	}()
	path := sc.Walk(req)
	var sum int64
	crit := map[int32]int64{}
	for _, p := range path {
		sum += p.Dur()
		if p.Unknown || p.Term == critpath.NoTerm {
			acc.Unknown += p.Dur()
			continue
		}
		crit[int32(p.Term)] += p.Dur()
		acc.Critical(p.Term, p.Kind, p.Dur())
	}
	acc.Request(lat, committed, sum)
	d.accountCPU(acc, ms, path, seen, used)
	// the fix column as the Go analysis computes it (budget.Fix): exact,
	// by a shortcut where one applies, else simulating each removal
	terms := make([]critpath.TermID, 0, len(crit))
	for t := range crit {
		terms = append(terms, critpath.TermID(t))
	}
	d.fix.Begin(req, committed, terms)
	for t, c := range crit {
		acc.Fix(critpath.TermID(t), d.fix.Gain(critpath.TermID(t), c))
	}
	acc.Predict(sc, req, preds, d.terms.list)
	if acc.slowest == nil || lat > acc.slowest.Latency {
		acc.slowest = pathOfRequest(r.id, req, path, committed)
	}
}

// accountCPU books a request's holds and CPU. Each hold (latscope.Hold)
// on the request's threads is its on-CPU term: its wait is the hold's
// time in no recorded wait inside it (on CPU, or waiting for one), its
// critical part the path's unknown time on that thread within it. The
// exact CPU (the library's cpuTime of the request and of each task run)
// is booked when every thread of the request carries one: its critical
// part is, per thread, the CPU up to the path's unknown time on that
// thread, less what the holds took. What remains unknown is time in a
// wait under JFR's threshold, or waiting for a CPU.
func (d *reqData) accountCPU(acc *reqAcc, ms []member, path []critpath.PathSeg, seen, used map[int32]bool) {
	unknown := map[tracein.GoID]int64{}
	var u int64
	for _, p := range path {
		if p.Unknown || p.Term == critpath.NoTerm {
			unknown[p.G] += p.Dur()
			u += p.Dur()
		}
	}
	var hCrit, hCPUCrit, hCPU int64
	for _, m := range ms {
		td := d.threads[m.thread]
		if td == nil || len(td.holds) == 0 {
			continue
		}
		g := tracein.GoID(m.thread)
		for _, h := range td.holds {
			if h.start < m.start || h.start >= m.end {
				continue
			}
			var crit int64
			for _, p := range path {
				if p.G == g && (p.Unknown || p.Term == critpath.NoTerm) {
					crit += max(0, min(int64(p.End), h.end)-max(int64(p.Start), h.start))
				}
			}
			var in int64
			j := sort.Search(len(td.waits), func(j int) bool { return td.waits[j].end > h.start })
			for ; j < len(td.waits) && td.waits[j].start < h.end; j++ {
				in += max(0, min(td.waits[j].end, h.end)-max(td.waits[j].start, h.start))
			}
			ht := critpath.TermID(h.term)
			acc.Wait(ht, max(0, h.end-h.start-in))
			acc.Critical(ht, frame.Running, crit)
			acc.Fix(ht, crit)
			acc.regionWall[d.regions.id(d.terms.list[h.term].Path)] += max(0, h.end-h.start-in)
			seen[h.term], used[h.term] = true, true
			hCrit += crit
			if h.cpu >= 0 {
				hCPU += h.cpu
				hCPUCrit += min(h.cpu, crit)
				acc.CPU(ht, h.cpu)
			}
		}
	}
	acc.heldCrit += hCrit
	cpu := map[tracein.GoID]int64{}
	for _, m := range ms {
		if m.cpu < 0 {
			return
		}
		cpu[tracein.GoID(m.thread)] += m.cpu
	}
	var all, crit int64
	for g, c := range cpu {
		all += c
		crit += min(c, unknown[g])
	}
	acc.cpu += all
	acc.runCrit += min(max(0, crit-hCPUCrit), u-hCrit)
	acc.heldCPU += hCPU
	acc.cpuReqs++
}

// futureWaits are JDK methods that wait for another thread's task: a park
// beneath one, outside a latscope.TaskWait, is a hand-off the Java library
// did not see.
var futureWaits = []string{"java.util.concurrent.FutureTask.get", "java.util.concurrent.CompletableFuture.join",
	"java.util.concurrent.CompletableFuture.get", "java.util.concurrent.ForkJoinTask.join", "java.util.concurrent.ForkJoinTask.get",
	"java.util.concurrent.ExecutorCompletionService.take", "java.util.concurrent.CountDownLatch.await"}

func isFutureWait(mech string) bool {
	return slices.ContainsFunc(futureWaits, func(p string) bool { return strings.HasPrefix(mech, p) })
}

// pathOfRequest copies a walk's path (latest first) in time order. The
// path's Task is the request's id. Time in no recorded wait (the timelines'
// running segments) is unknown on the JVM: on CPU, waiting for one, or in
// a wait under the threshold.
func pathOfRequest(id int64, req *critpath.Request, path []critpath.PathSeg, committed int) *budget.Path {
	p := &budget.Path{Task: tracein.TaskID(id), Begin: req.Begin, End: req.End, Latency: req.Latency(), Goroutines: committed, Segs: make([]critpath.PathSeg, len(path))}
	for i, s := range path {
		if s.Term == critpath.NoTerm {
			s.Unknown, s.Kind = true, frame.Other
		}
		p.Segs[len(path)-1-i] = s
	}
	return p
}

// outsideWaits sums, by kind, the wait time of threads while they worked
// for no recorded request.
func (d *reqData) outsideWaits(claims map[threadKey][]member) [frame.NumKinds]int64 {
	var out [frame.NumKinds]int64
	for k, td := range d.threads {
		cs := claims[k]
		slices.SortFunc(cs, func(a, b member) int { return cmp.Compare(a.start, b.start) })
		// a thread works for one request at a time: claims end in start order
		for _, w := range td.waits {
			in := int64(0)
			j := sort.Search(len(cs), func(j int) bool { return cs[j].end > w.start })
			for _, c := range cs[j:] {
				if c.start >= w.end {
					break
				}
				in += max(0, min(w.end, c.end)-max(w.start, c.start))
			}
			out[w.kind] += max(0, w.end-w.start-in)
		}
	}
	return out
}

// groups turns the accumulators into budget groups over a compacted term
// table.
func (d *reqData) groups(accs map[string]*reqAcc, order []string, used map[int32]bool, preds []budget.Prediction, sc *critpath.Scratch, members [][]member) ([]budget.Term, []*budget.Group) {
	remap := map[int32]critpath.TermID{}
	var terms []budget.Term
	for i := range d.terms.list {
		if used[int32(i)] {
			remap[int32(i)] = critpath.TermID(len(terms))
			terms = append(terms, d.terms.list[i])
		}
	}
	var groups []*budget.Group
	names := d.regions.names()
	for _, name := range order {
		acc := accs[name]
		// requests excluded for the recorder's start-up ended in the window:
		// counted with those cut by it (throughput counts them)
		g := &budget.Group{Name: name, ExcludedBefore: acc.before + acc.startup, CPUSamples: acc.samples}
		acc.Fill(g, preds, terms)
		g.Unknown -= acc.heldCrit
		if acc.cpuReqs == acc.Count && acc.Count > 0 { // the library measured every request's CPU
			// a hold's CPU is in its own term
			g.Running = budget.TimeStat{Wait: max(0, acc.cpu-acc.heldCPU), Critical: acc.runCrit}
			g.RunningExact = true
			g.Unknown -= acc.runCrit
		}
		acc.Each(func(ts budget.TermStat) {
			ts.Term = remap[int32(ts.Term)]
			g.Terms = append(g.Terms, ts)
		})
		sort.SliceStable(g.Terms, func(i, j int) bool {
			x, y := g.Terms[i], g.Terms[j]
			if x.Critical != y.Critical {
				return x.Critical > y.Critical
			}
			if x.Wait != y.Wait {
				return x.Wait > y.Wait
			}
			return terms[x.Term].Frame+terms[x.Term].Mechanism < terms[y.Term].Frame+terms[y.Term].Mechanism
		})
		if len(acc.queue) > 0 {
			g.ServerQueue = &budget.ServerQueue{Requests: len(acc.queue), Queue: budget.StatsOf(acc.queue), Workers: acc.workers}
		}
		g.Regions = d.regionStats(acc, names)
		if f := d.startupFinding(acc); f != nil {
			d.findings = append(d.findings, f)
		}
		if f := queueFinding(acc); f != nil {
			d.findings = append(d.findings, f)
		}
		if f := d.warmup(acc); f != nil {
			d.findings = append(d.findings, f)
		}
		g.Slowest = acc.slowest
		g.Median = d.medianPath(acc, g.Latency.P50, sc, members)
		for i := range g.Slowest.Segs {
			remapSeg(&g.Slowest.Segs[i], remap)
		}
		if g.Median != nil && g.Median != g.Slowest {
			for i := range g.Median.Segs {
				remapSeg(&g.Median.Segs[i], remap)
			}
		}
		groups = append(groups, g)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		if groups[i].Count != groups[j].Count {
			return groups[i].Count > groups[j].Count
		}
		return groups[i].Name < groups[j].Name
	})
	return terms, groups
}

func remapSeg(p *critpath.PathSeg, remap map[int32]critpath.TermID) {
	if p.Term != critpath.NoTerm {
		p.Term = remap[int32(p.Term)]
	}
}

// medianPath walks again the request whose latency is closest to p50.
func (d *reqData) medianPath(acc *reqAcc, p50 int64, sc *critpath.Scratch, members [][]member) *budget.Path {
	best := -1
	for _, i := range acc.idx {
		r := d.requests[i]
		if best < 0 || abs64(r.end-r.start-p50) < abs64(d.requests[best].end-d.requests[best].start-p50) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	req := d.build(d.requests[best], members[best])
	committed := 0
	for i := range req.Gs {
		if req.Gs[i].Committed {
			committed++
		}
	}
	return pathOfRequest(d.requests[best].id, req, sc.Walk(req), committed)
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// regionStats lists thread time and CPU samples by application call path.
func (d *reqData) regionStats(acc *reqAcc, names []string) []budget.RegionStat {
	ids := map[int32]bool{}
	for id := range acc.regionWall {
		ids[id] = true
	}
	for id := range acc.regionCPU {
		ids[id] = true
	}
	var rs []budget.RegionStat
	for id := range ids {
		rs = append(rs, budget.RegionStat{Name: names[id], Wall: acc.regionWall[id], CPUSamples: acc.regionCPU[id]})
	}
	sortRegions(rs)
	return rs
}

// sortRegions orders call paths by thread time, then CPU samples, then
// name.
func sortRegions(rs []budget.RegionStat) {
	sort.Slice(rs, func(i, j int) bool {
		x, y := rs[i], rs[j]
		if x.Wall != y.Wall {
			return x.Wall > y.Wall
		}
		if x.CPUSamples != y.CPUSamples {
			return x.CPUSamples > y.CPUSamples
		}
		return x.Name < y.Name
	})
}

// startupFinding says which requests the recorder's own start-up slowed,
// and that they are excluded.
func (d *reqData) startupFinding(acc *reqAcc) *budget.Finding {
	if acc.startup == 0 {
		return nil
	}
	rest := budget.StatsOf(acc.Lat).Mean
	return &budget.Finding{Kind: budget.FindWarmup, Group: acc.name, Text: fmt.Sprintf(
		"%s: the recorder's own start-up, not warm-up: the first %d requests of the recording (in its first %.1f s) averaged %.1f ms against %.1f ms for the rest, but the recording began %.1f s after the JVM started, past its class loading and JIT warm-up (jvm.WarmupGap %v): "+
			"starting a recording (jcmd JFR.start) sets up JFR's buffers and threads and re-instruments the event classes, which deoptimizes and recompiles the code that uses them, and stalls the service meanwhile. "+
			"Those %d requests are excluded from the budget and counted with the requests cut by the window; nothing is left to warm up",
		acc.name, acc.startup, float64(acc.startupEnd)/1e9, float64(acc.startupLat)/float64(acc.startup)/1e6, rest/1e6, d.startupGap.Seconds(), WarmupGap, acc.startup)}
}

// queueFinding states the time the route's requests spent in the HTTP
// server before they began (queueTime, io.latscope.ServerQueue): outside
// their latency, inside the client's.
func queueFinding(acc *reqAcc) *budget.Finding {
	if acc.Count == 0 {
		return nil
	}
	if len(acc.queue) == 0 {
		return nil
	}
	q, o, l := budget.StatsOf(acc.queue), budget.StatsOf(acc.outer), budget.StatsOf(acc.Lat)
	text := fmt.Sprintf("%s: server queue: before they began, %d of %d requests waited in the HTTP server (from the hand-off of the exchange to its executor to the request's begin: the executor's queue and the reading of the headers; io.latscope.ServerQueue) %.2f ms on average (p99 %.2f ms), outside the latency above; with it the mean is %.2f ms (+%.1f%%) and p99 %.2f ms: what the clients saw, less the network",
		acc.name, len(acc.queue), acc.Count, q.Mean/1e6, float64(q.P99)/1e6, o.Mean/1e6, 100*(o.Mean-l.Mean)/max(l.Mean, 1), float64(o.P99)/1e6)
	if acc.workers > 0 {
		text += fmt.Sprintf("; its executor serves with %d workers: a station of the queueing model (docs/method.md §7)", acc.workers)
	}
	return &budget.Finding{Kind: budget.FindUnexplained, Group: acc.name, Text: text}
}

// warmup judges a route's requests in start order as for Go
// (budget.JudgeWarmup: the first tenth's mean over the rest's, on its
// 95 % interval).
func (d *reqData) warmup(acc *reqAcc) *budget.Finding {
	idx := slices.Clone(acc.idx)
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(d.requests[a].start, d.requests[b].start) })
	lat := make([]float64, len(idx))
	for i, j := range idx {
		lat[i] = float64(d.requests[j].end - d.requests[j].start)
	}
	j := budget.JudgeWarmup(lat)
	if acc.startup > 0 && j.Verdict != budget.WarmupFires {
		// the route's slow first requests were the recorder's own start-up
		// in a recording begun past the JVM's warm-up: excluded and said
		// (startupFinding). What is left uncertain at the start is that
		// start-up's tail, and the advice to start the recording after
		// warm-up was followed.
		return nil
	}
	return jvmWording.WarmupFinding(acc.name, j)
}
