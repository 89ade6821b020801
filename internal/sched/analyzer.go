package sched

import (
	"unsafe"

	"github.com/latscope/latscope/internal/gotable"

	"github.com/latscope/latscope/internal/tracein"
)

// Analyzer is the streaming trace analyser. Create it with New, feed it
// every record of one trace in order with Event, then call Finalize once.
type Analyzer struct {
	opts   Options
	stacks *tracein.Stacks
	cpu    *cpuAcc
	byCPU  map[tracein.StackID]sampleClass // classification per sample stack
	byApp  []int32                         // by StackID: 1 + index in names of its application frame; 0 not yet known
	names  []string                        // frame names of causes; names[0] is ""
	nameID map[string]int32
	funcs  []string // scratch

	start, end tracein.Time
	seen       bool
	procs      idSet
	threads    idSet
	gs         gotable.Table[gstate]
	lastThread int64 // the thread of the previous record, already in threads
	bursts     *bursts
	waits      waitHist
	st         TraceStats
}

// gstate is what the analyser keeps per live goroutine.
type gstate struct {
	runnable tracein.Time    // when it was woken or created; -1 otherwise
	block    tracein.StackID // where it last blocked
}

// New returns an analyser; stacks is the table that the records' StackIDs
// index (tracein.Reader.Stacks) and must not be nil.
func New(opts Options, stacks *tracein.Stacks) *Analyzer {
	opts = opts.withDefaults()
	return &Analyzer{
		opts:       opts,
		stacks:     stacks,
		cpu:        newCPUAcc(opts.Frames, &opts.Rules),
		byCPU:      map[tracein.StackID]sampleClass{},
		names:      []string{""},
		nameID:     map[string]int32{"": 0},
		procs:      newIDSet(),
		threads:    newIDSet(),
		lastThread: -1,
		bursts:     newBursts(opts.Thresholds),
	}
}

// Events consumes records, in order, with the trace's extent kept in
// locals over the batch.
func (a *Analyzer) Events(recs []tracein.Event) {
	if len(recs) == 0 {
		return
	}
	if !a.seen {
		a.start, a.seen = recs[0].Time, true
	}
	start, end := a.start, a.end
	for i := range recs {
		ev := &recs[i]
		start, end = min(start, ev.Time), max(end, ev.Time)
		if ev.Thread >= 0 && ev.Thread != a.lastThread && ev.Kind != tracein.KindSync {
			a.threads.add(ev.Thread)
			a.lastThread = ev.Thread
		}
		switch ev.Kind {
		case tracein.KindProcState:
			a.procState(ev)
		case tracein.KindGoState:
			a.goState(ev)
		case tracein.KindSample:
			a.sample(ev)
		}
	}
	a.start, a.end = start, end
}

// Event consumes one record.
func (a *Analyzer) Event(ev *tracein.Event) { a.Events(unsafe.Slice(ev, 1)) }

func (a *Analyzer) procState(ev *tracein.Event) {
	a.procs.add(ev.Proc)
	switch ev.To {
	case tracein.Running:
		a.st.PStarts++
	case tracein.NotExist:
		a.st.PStops++
	}
}

func (a *Analyzer) goState(ev *tracein.Event) {
	g, ok := a.gs.Lookup(ev.G)
	if !ok {
		g = a.gs.Get(ev.G)
	}
	if g == nil {
		if ev.To == tracein.NotExist {
			return
		}
		g = &gstate{runnable: -1}
		a.gs.Set(ev.G, g)
	}
	switch {
	case ev.To == tracein.NotExist:
		a.gs.Delete(ev.G)
	case ev.To == tracein.Waiting:
		g.block, g.runnable = ev.Stack, -1
	case ev.From == tracein.NotExist && ev.To == tracein.Runnable:
		a.st.Creations++
		g.runnable = ev.Time
		a.bursts.add(ev.Time, causeKey{kind: CauseCreate, actor: a.actor(ev), target: a.app(ev.Stack)})
	case ev.From == tracein.Waiting && ev.To == tracein.Runnable:
		a.st.Wakeups++
		if ev.Actor == tracein.NoGoroutine {
			a.st.PollWakeups++
		}
		g.runnable = ev.Time
		a.bursts.add(ev.Time, causeKey{kind: CauseWake, actor: a.actor(ev), target: a.app(g.block)})
	case ev.From == tracein.Runnable && ev.To == tracein.Running:
		if g.runnable >= 0 {
			a.waits.add(int64(ev.Time - g.runnable))
		}
		g.runnable = -1
	default:
		g.runnable = -1
	}
}

// actor returns the application frame of the goroutine that made ev.G
// runnable; "" for the network poller and timers.
func (a *Analyzer) actor(ev *tracein.Event) int32 {
	if ev.Actor == tracein.NoGoroutine || ev.Actor == ev.G {
		return 0
	}
	return a.app(ev.ActorStack)
}

// app returns the application frame of a stack, or its outermost frame
// when it has none (runtime-internal goroutines), as an index in names.
func (a *Analyzer) app(id tracein.StackID) int32 {
	if id == tracein.NoStack {
		return 0
	}
	if int(id) < len(a.byApp) && a.byApp[id] != 0 {
		return a.byApp[id] - 1
	}
	funcs := a.funcNames(id)
	s := a.opts.Rules.Decide(funcs).App
	if s == "" && len(funcs) > 0 {
		s = funcs[len(funcs)-1]
	}
	n, ok := a.nameID[s]
	if !ok {
		n = int32(len(a.names))
		a.names = append(a.names, s)
		a.nameID[s] = n
	}
	for int(id) >= len(a.byApp) {
		a.byApp = append(a.byApp, 0)
	}
	a.byApp[id] = n + 1
	return n
}

func (a *Analyzer) funcNames(id tracein.StackID) []string {
	a.funcs = a.funcs[:0]
	for _, f := range a.stacks.Frames(id) {
		a.funcs = append(a.funcs, f.Func)
	}
	return a.funcs
}

func (a *Analyzer) sample(ev *tracein.Event) {
	sc, ok := a.byCPU[ev.Stack]
	if !ok {
		sc = a.cpu.classify(a.funcNames(ev.Stack))
		a.byCPU[ev.Stack] = sc
	}
	a.cpu.addAt(sc, ev.Time)
}

// Finalize returns the report. The Analyzer must not be used afterwards.
func (a *Analyzer) Finalize() *Report {
	st := a.st
	st.Duration = a.end.Sub(a.start)
	st.PsSeen, st.Threads = a.procs.len(), a.threads.len()
	st.Bursts, st.Causes = a.bursts.finish(a.opts.Top, a.names)
	st.Wait = a.waits.stats()
	r := &Report{
		CPU:        a.cpu.result("trace", "samples", a.opts.Top),
		Trace:      &st,
		Procs:      procsOf(a.opts.Host, st.PsSeen),
		Thresholds: a.opts.Thresholds,
	}
	r.CPU.setInterval(designOf(a.cpu.seq), a.opts.Thresholds.MinSamples)
	a.gs, a.byCPU, a.byApp, a.bursts = gotable.Table[gstate]{}, nil, nil, nil
	return r
}
