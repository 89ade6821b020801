package jvm

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/critpath"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/tracein"
)

// The request analysis builds, for each latscope.Request, the timelines of
// the threads that worked for it — the request's own thread from begin to
// end, and each task of the request on its executor thread, from its submit
// (a queue segment until the task ran) to the end of its run — and walks
// the critical path backwards from the request's end with package critpath,
// the same walk as for Go (docs/method.md §4). A latscope.TaskWait is a
// wait woken by its task: the walk follows it into the task's thread, so
// time the request thread and a task overlapped counts once. Time in no
// recorded wait (on CPU, waiting for a CPU, or in waits shorter than the
// JFR threshold) fills the gaps as unexplained.

// reqAcc accumulates one route's requests.
type reqAcc struct {
	budget.Book // what the Go and JVM analyses book alike
	name        string
	before      int
	samples     int
	// cpu and runCrit: the library's exact thread CPU of the requests
	// (all their threads) and the part of it on the critical path outside
	// holds; cpuReqs counts the requests that carry it; heldCPU is the CPU
	// inside holds (latscope.Hold), heldCrit the holds' critical time.
	cpu, runCrit      int64
	cpuReqs           int
	heldCPU, heldCrit int64
	// startup counts the requests that began during the recorder's own
	// start-up (excluded), startupLat sums their latencies
	startup    int
	startupLat int64
	startupEnd int64 // the start-up's end, from the recording's start
	// queue: the requests' server queue (queueTime, io.latscope.ServerQueue),
	// and their latency with it, of the requests that carry it
	queue, outer            []int64
	workers                 int // the largest serverWorkers a request carried
	regionWall              map[int32]int64
	regionCPU               map[int32]int
	slowest                 *budget.Path
	medianReq               int // index in reqData.requests of a request of median latency
	idx                     []int
	taskWaits, taskWaitsHit int
}

func newReqAcc(name string, npred int) *reqAcc {
	return &reqAcc{name: name, regionWall: map[int32]int64{}, regionCPU: map[int32]int{}, Book: budget.Book{Pred: make([][]int64, npred)}}
}

// reqOutcome is what the request analysis found.
type reqOutcome struct {
	groups  []*budget.Group
	terms   []budget.Term
	outside [frame.NumKinds]int64
	// samples counts execution samples on threads while they worked for a
	// request; all counts every execution sample.
	samples, all int
	// tasks: hand-offs of recorded requests; unmatched: task waits whose
	// task has no TaskRun event in the recording, or that belong to no
	// recorded request.
	tasks, unmatched int
	// runsOnCaller counts tasks run on the thread that waited for them.
	runsOnCaller int
	// nested counts requests begun inside another request on its thread.
	nested int
	// unwrapped counts parks under Future.get/join on request threads
	// outside any latscope.TaskWait: hand-offs the library did not see.
	unwrapped     int
	unwrappedWait int64
	// heldCPU is the requests' CPU inside holds (latscope.Hold): a term
	// of its own, so not the coverage line's independent CPU.
	heldCPU int64
	// cpu is the requests' exact CPU (the library's cpuTime), holds
	// included; cpuExact is set when every request of every route has it.
	cpu         int64
	cpuExact    bool
	heldByGroup map[string]time.Duration
	handOffs    map[string]HandOff
	startup     int // requests excluded for the recorder's start-up
}

// member is one thread's share of a request: [start,end) on thread, after
// a queue segment from queued (the submit) when it is a task.
type member struct {
	thread        threadKey
	start, end    int64
	queued        int64
	queueTerm     int32
	task          int64
	creatorThread threadKey
	cpu           int64 // the thread's CPU time over it (the library's cpuTime), -1 when unknown
}

// finalize analyses the collected events. preds are the predictions to
// simulate; rules match their names.
//
// With pastWarmup (the recording began past WarmupGap after the JVM
// started), a route whose first requests are slow (budget.WarmupRatio, as
// the warm-up check) had them slowed by the recorder's own start-up: they
// are excluded (startup), and a finding says so.
func (d *reqData) finalize(preds []budget.Prediction, recStart int64, pastWarmup bool) *reqOutcome {
	out := &reqOutcome{}
	for _, td := range d.threads {
		slices.SortFunc(td.waits, func(a, b waitRec) int { return cmp.Compare(a.start, b.start) })
		slices.SortFunc(td.tasks, func(a, b taskWaitRec) int { return cmp.Compare(a.start, b.start) })
		slices.SortFunc(td.samples, func(a, b sampleRec) int { return cmp.Compare(a.t, b.t) })
		out.all += len(td.samples)
	}
	d.heldWaits()
	outer := d.unnest()
	out.nested = len(outer)
	slices.SortFunc(d.requests, func(a, b reqRec) int { return cmp.Compare(a.end, b.end) })
	byReq := map[int64][]runRec{}
	known := map[int64]bool{}
	for _, r := range d.requests {
		known[r.id] = true
	}
	for _, r := range d.runs {
		if o, ok := outer[r.rid]; ok {
			r.rid = o
		}
		if known[r.rid] {
			byReq[r.rid] = append(byReq[r.rid], r)
		}
	}
	var cutoff map[string]int64
	if pastWarmup {
		cutoff = d.recorderStartup(recStart)
	}
	claims := map[threadKey][]member{}
	accs := map[string]*reqAcc{}
	var order []string
	used := map[int32]bool{}
	var sc critpath.Scratch
	members := make([][]member, len(d.requests))
	for i, r := range d.requests {
		name := r.route
		if name == "" {
			name = "(no route)"
		}
		acc := accs[name]
		if acc == nil {
			acc = newReqAcc(name, len(preds))
			accs[name] = acc
			order = append(order, name)
		}
		ms := d.members(r, byReq[r.id], out)
		members[i] = ms
		for _, m := range ms {
			claims[m.thread] = append(claims[m.thread], m)
		}
		// A request begun while no recording ran has no recorded begin:
		// JFR commits it with its start at its end (duration 0, 20 of
		// 2448 requests of a 5 s recording in lab jvm). It began before
		// the recording, like one whose start lies before it.
		if r.start < recStart || r.end == r.start {
			acc.before++
			continue
		}
		if c, ok := cutoff[name]; ok && r.start < c {
			acc.startup++
			acc.startupLat += r.end - r.start
			acc.startupEnd = c - recStart
			continue
		}
		req := d.build(r, ms)
		acc.idx = append(acc.idx, i)
		d.account(acc, r, ms, req, &sc, preds, used, out)
	}
	out.outside = d.outsideWaits(claims)
	out.terms, out.groups = d.groups(accs, order, used, preds, &sc, members)
	out.handOffs = d.handOffs()
	out.cpuExact = len(accs) > 0
	out.heldByGroup = map[string]time.Duration{}
	for _, acc := range accs {
		out.heldByGroup[acc.name] = time.Duration(acc.heldCPU)
		out.startup += acc.startup
		out.cpuExact = out.cpuExact && acc.cpuReqs == acc.Count
		out.cpu += acc.cpu
		out.heldCPU += acc.heldCPU
	}
	return out
}

// unnest removes the requests begun on a thread inside another request of
// that thread (a second filter, a Requests.begin inside a filtered
// request): their time is the outer request's. It returns, for each
// removed request, the id of the outermost request around it, to which
// its tasks then belong.
func (d *reqData) unnest() map[int64]int64 {
	rs := d.requests
	slices.SortFunc(rs, func(a, b reqRec) int {
		if c := cmp.Compare(a.thread, b.thread); c != 0 {
			return c
		}
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(b.end, a.end) // the outer first
	})
	outer := map[int64]int64{}
	kept := rs[:0]
	for _, r := range rs {
		if n := len(kept); n > 0 && kept[n-1].thread == r.thread && r.start >= kept[n-1].start && r.end <= kept[n-1].end {
			outer[r.id] = kept[n-1].id
			continue
		}
		kept = append(kept, r)
	}
	d.requests = kept
	return outer
}

// members returns the threads that worked for request r: its own, then
// its tasks' (a task run on a thread the request already holds at that
// time — run by the caller — is part of that thread's time).
func (d *reqData) members(r reqRec, runs []runRec, out *reqOutcome) []member {
	ms := []member{{thread: r.thread, start: r.start, end: r.end, queued: r.start, queueTerm: -1, cpu: r.cpu}}
	slices.SortFunc(runs, func(a, b runRec) int { return cmp.Compare(a.start, b.start) })
	for _, run := range runs {
		inside := false
		for _, m := range ms {
			inside = inside || (m.thread == run.thread && run.start >= m.start && run.start < m.end)
		}
		if inside {
			out.runsOnCaller++
			continue
		}
		if run.start >= r.end {
			continue // began after the request ended: not its time
		}
		// a task's run event ends after it completed its future, so it can
		// end a little after the request it woke: its time after the
		// request's end is not the request's
		m := member{thread: run.thread, start: run.start, end: min(run.end, r.end), queued: run.start, queueTerm: -1, task: run.task, creatorThread: run.thread, cpu: run.cpu}
		if run.end > r.end && run.cpu > 0 && run.end > run.start { // only its share inside the request
			m.cpu = run.cpu * (m.end - m.start) / (run.end - run.start)
		}
		if s, ok := d.submits[run.task]; ok && s.t <= run.start {
			m.queued, m.queueTerm, m.creatorThread = s.t, s.term, s.thread
		}
		ms = append(ms, m)
		out.tasks++
	}
	return ms
}

// build makes the critpath request of r from its members.
func (d *reqData) build(r reqRec, ms []member) *critpath.Request {
	req := &critpath.Request{Begin: tracein.Time(r.start), End: tracein.Time(r.end), EndG: 0, Gs: make([]critpath.G, len(ms))}
	byTask := map[int64]int32{}
	for i, m := range ms {
		if m.task != 0 {
			byTask[m.task] = int32(i)
		}
	}
	for i, m := range ms {
		g := &req.Gs[i]
		g.ID = tracein.GoID(m.thread)
		g.Start = tracein.Time(m.queued)
		g.Committed = m.end <= r.end
		g.Creator = -1
		if i > 0 {
			g.Creator = creatorOf(ms, m)
		}
		if m.queued < m.start && m.queueTerm >= 0 {
			g.Segs = append(g.Segs, critpath.Seg{Start: tracein.Time(m.queued), End: tracein.Time(m.start), Kind: frame.Sync, Term: critpath.TermID(m.queueTerm), Waker: -1, Borrow: -1})
		}
		g.Segs = d.timeline(g.Segs, m, ms, byTask)
	}
	return req
}

// creatorOf returns the member whose thread submitted m's task while it
// worked for the request, or 0 (the request's thread).
func creatorOf(ms []member, m member) int32 {
	for j, c := range ms {
		if c.thread == m.creatorThread && m.queued >= c.start && m.queued <= c.end && c.task != m.task {
			return int32(j)
		}
	}
	return 0
}

// timeline appends m's thread's segments over [m.start, m.end): task waits
// (woken by the task's member), the waits outside them, and running
// segments between. A task wait's own park is part of the task wait.
func (d *reqData) timeline(segs []critpath.Seg, m member, ms []member, byTask map[int64]int32) []critpath.Seg {
	td := d.threads[m.thread]
	var cand []critpath.Seg
	if td != nil {
		tw := clipTasks(td.tasks, m.start, m.end)
		for _, w := range tw {
			seg := critpath.Seg{Start: tracein.Time(w.start), End: tracein.Time(w.end), Kind: frame.Sync, Term: critpath.TermID(w.term), Waker: -1, Borrow: -1}
			g, ok := byTask[w.task]
			if !ok {
				cand = append(cand, seg)
				continue
			}
			// woken by the task until its run ended; the rest is the
			// hand-off's own wake-up latency, a wait of fixed length
			seg.Waker = g
			if done := ms[g].end; done > w.start && done < w.end {
				tail := seg
				tail.Start, tail.Waker = tracein.Time(done), -1
				seg.End = tracein.Time(done)
				cand = append(cand, tail)
			}
			cand = append(cand, seg)
		}
		for _, w := range clipWaits(td.waits, m.start, m.end) {
			for _, p := range subtract(w.start, w.end, tw) {
				cand = append(cand, critpath.Seg{Start: tracein.Time(p[0]), End: tracein.Time(p[1]), Kind: w.kind, Term: critpath.TermID(w.term), Waker: -1, Borrow: -1})
			}
		}
	}
	slices.SortStableFunc(cand, func(a, b critpath.Seg) int { return cmp.Compare(a.Start, b.Start) })
	t := tracein.Time(m.start)
	for _, c := range cand {
		c.Start = max(c.Start, t)
		if c.End <= c.Start {
			continue
		}
		if c.Start > t {
			segs = append(segs, critpath.Seg{Start: t, End: c.Start, Kind: frame.Running, Term: critpath.NoTerm, Waker: -1, Borrow: -1})
		}
		segs = append(segs, c)
		t = c.End
	}
	if end := tracein.Time(m.end); end > t {
		segs = append(segs, critpath.Seg{Start: t, End: end, Kind: frame.Running, Term: critpath.NoTerm, Waker: -1, Borrow: -1})
	}
	return segs
}

// subtract returns the parts of [s, e) outside the task waits tw (sorted).
func subtract(s, e int64, tw []taskWaitRec) [][2]int64 {
	var out [][2]int64
	for _, w := range tw {
		if w.end <= s || w.start >= e {
			continue
		}
		if w.start > s {
			out = append(out, [2]int64{s, w.start})
		}
		s = max(s, w.end)
	}
	if e > s {
		out = append(out, [2]int64{s, e})
	}
	return out
}

// clipWaits returns the waits of ws (sorted by start) that overlap
// [from, to), clipped to it.
func clipWaits(ws []waitRec, from, to int64) []waitRec {
	i := sort.Search(len(ws), func(i int) bool { return ws[i].end > from })
	var out []waitRec
	for ; i < len(ws) && ws[i].start < to; i++ {
		w := ws[i]
		if w.end <= from {
			continue
		}
		w.start, w.end = max(w.start, from), min(w.end, to)
		out = append(out, w)
	}
	return out
}

// clipTasks is clipWaits for task waits.
func clipTasks(ws []taskWaitRec, from, to int64) []taskWaitRec {
	var out []taskWaitRec
	// a thread waits for one task at a time: ends are in start order
	i := sort.Search(len(ws), func(i int) bool { return ws[i].end > from })
	for _, w := range ws[i:] {
		if w.start >= to {
			break
		}
		if w.end > from {
			w.start, w.end = max(w.start, from), min(w.end, to)
			out = append(out, w)
		}
	}
	return out
}

// heldWaits puts each wait inside a hold (latscope.Hold) of its thread
// beneath the hold's acquiring frame: its term's call path gets that
// frame (ConnPool.borrow) between the frames the two share and the rest, so
// a pool or lock named by its acquire frame finds the waits its holders
// spent holding it (latscope predict --pool ConnPool.borrow:6).
func (d *reqData) heldWaits() {
	variant := map[[2]int32]int32{}
	for _, td := range d.threads {
		if len(td.holds) == 0 {
			continue
		}
		slices.SortFunc(td.holds, func(a, b holdRec) int { return cmp.Compare(a.start, b.start) })
		for i := range td.waits {
			w := &td.waits[i]
			j := sort.Search(len(td.holds), func(j int) bool { return td.holds[j].start > w.start }) - 1
			if j < 0 || w.end > td.holds[j].end {
				continue
			}
			h := td.holds[j]
			k := [2]int32{w.term, h.term}
			v, ok := variant[k]
			if !ok {
				v = d.terms.id(heldTerm(d.terms.list[w.term], d.terms.list[h.term]))
				variant[k] = v
			}
			w.term = v
		}
	}
}

// heldTerm is term t with the hold's call path above it.
func heldTerm(t, hold budget.Term) budget.Term {
	if hold.Frame == "" || slices.Contains(t.Path, hold.Frame) || t.Frame == hold.Frame {
		return t
	}
	n := 0
	for n < len(t.Path) && n < len(hold.Path) && t.Path[n] == hold.Path[n] {
		n++
	}
	path := append(slices.Clone(hold.Path), t.Path[n:]...)
	t.Path = path
	return t
}

// HandOff is how long a lock or pooled resource marked by the library
// stayed free between one holder's release and the next holder's start when
// the next one was already waiting for it (a contended hand-off): the wake-up
// and scheduling of the waiter, time no one can use it.
type HandOff struct {
	Mean      time.Duration // per contended hand-off
	Contended int           // hand-offs to a thread that was waiting
	Holds     int
	// Overlaps counts holds that began before the previous one ended:
	// a pool of several, whose hand-offs are not measured (Mean 0).
	Overlaps int
}

// handOffs measures the contended hand-offs of each hold, by its frame.
func (d *reqData) handOffs() map[string]HandOff {
	type hold struct {
		holdRec
		thread threadKey
	}
	by := map[string][]hold{}
	for k, td := range d.threads {
		for _, h := range td.holds {
			by[h.frame] = append(by[h.frame], hold{h, k})
		}
	}
	out := map[string]HandOff{}
	for f, hs := range by {
		slices.SortFunc(hs, func(a, b hold) int { return cmp.Compare(a.start, b.start) })
		var sum int64
		var n, overlaps int
		for i := 1; i < len(hs); i++ {
			p, h := hs[i-1], hs[i]
			if p.end > h.start {
				overlaps++ // a pool of several: overlapping holders
				continue
			}
			// contended: the next holder was waiting for this hold — a
			// monitor enter or a park beneath the hold's own frame that
			// began before the release and ended right before the hold
			// (not any wait: a socket read ending just before an
			// uncontended acquire made its idle time a hand-off)
			td := d.threads[h.thread]
			j := sort.Search(len(td.waits), func(j int) bool { return td.waits[j].end >= h.start-int64(50*time.Microsecond) })
			for ; j < len(td.waits) && td.waits[j].end <= h.start; j++ {
				if w := td.waits[j]; w.start < p.end && w.kind == frame.Sync && d.terms.list[w.term].Frame == h.frame {
					sum += h.start - p.end
					n++
					break
				}
			}
		}
		switch {
		case overlaps > 0:
			out[f] = HandOff{Holds: len(hs), Overlaps: overlaps}
		case n > 0:
			out[f] = HandOff{Mean: time.Duration(sum / int64(n)), Contended: n, Holds: len(hs)}
		}
	}
	return out
}

// recorderStartup finds, per route, when the recorder's own start-up
// stopped slowing requests: when the warm-up check (budget.JudgeWarmup:
// the first tenth's mean latency over budget.WarmupRatio times the
// rest's, judged on the ratio's 95 % interval) fires — or, with fewer than
// budget.MinWarmupRequests requests, when the point ratio is over it —
// the first requests in start order up to the first run of k requests (a
// twentieth, at least 5) whose mean is back under the bar times the
// rest's. It returns the start of that run, by route; routes whose first
// tenth is not slow beyond its interval have none (an inconclusive ratio
// cuts nothing: the window stays whole, and the warm-up finding says it
// cannot tell).
func (d *reqData) recorderStartup(recStart int64) map[string]int64 {
	by := map[string][]reqRec{}
	for _, r := range d.requests {
		if r.start >= recStart && r.end > r.start {
			name := r.route
			if name == "" {
				name = "(no route)"
			}
			by[name] = append(by[name], r)
		}
	}
	out := map[string]int64{}
	for name, rs := range by {
		n := len(rs)
		if n < 20 {
			continue
		}
		slices.SortFunc(rs, func(a, b reqRec) int { return cmp.Compare(a.start, b.start) })
		lat := make([]float64, n)
		for i, r := range rs {
			lat[i] = float64(r.end - r.start)
		}
		w := budget.JudgeWarmup(lat)
		if w.Verdict != budget.WarmupFires && w.Verdict != budget.WarmupTooFew {
			continue
		}
		rest := w.Rest.Value
		k := max(n/20, 5)
		for i := 0; i+k <= n/2; i++ {
			var m float64
			for _, r := range rs[i : i+k] {
				m += float64(r.end - r.start)
			}
			if m/float64(k) <= budget.WarmupRatio*rest {
				if i > 0 {
					out[name] = rs[i].start
				}
				break
			}
		}
	}
	return out
}
