package jvm

import (
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/jfr"
)

// threadKey identifies a thread: its Java id, or minus its OS id.
type threadKey int64

func keyOf(t jfr.Thread) threadKey {
	if t.JavaID != 0 {
		return threadKey(t.JavaID)
	}
	return threadKey(-t.OSID)
}

// The records below are what the request analysis keeps of each event:
// copied out, pointer-free, times in Unix nanoseconds. JFR writes events in
// per-thread batches, not in time order, so a request's waits on other
// threads can come before or after its own event: they are kept until
// Finalize.
type (
	waitRec struct {
		start, end int64
		term       int32 // in the request term table
		kind       frame.Kind
	}
	taskWaitRec struct {
		start, end int64
		task, rid  int64
		term       int32
	}
	// holdRec is a lock or pooled resource held (latscope.Hold, from
	// io.latscope.Holds): term is its on-CPU term, path its acquiring
	// frame's call path (in reqData.regions).
	holdRec struct {
		start, end int64
		cpu        int64
		term       int32
		frame      string
	}
	sampleRec struct {
		t      int64
		region int32 // in reqData.regions
	}
	reqRec struct {
		start, end int64
		thread     threadKey
		id         int64
		route, tp  string
		cpu        int64 // the library's cpuTime, ns; -1 when the event has none
		queue      int64 // the library's queueTime, ns; -1 when the event has none
		workers    int   // the library's serverWorkers; 0 when the event has none
	}
	runRec struct {
		start, end int64
		thread     threadKey
		rid, task  int64
		cpu        int64
	}
	submitRec struct {
		t      int64
		thread threadKey
		rid    int64
		term   int32 // the queue term: the submitting frame's
	}
)

// threadData is what one thread did.
type threadData struct {
	name    string
	waits   []waitRec
	tasks   []taskWaitRec
	samples []sampleRec
	holds   []holdRec
}

// reqData collects the events the request analysis needs.
type reqData struct {
	fix      budget.Fix // the fix column, shared with the Go analysis
	threads  map[threadKey]*threadData
	requests []reqRec
	runs     []runRec
	submits  map[int64]submitRec // by task id
	terms    termTable
	regions  regionTable
	findings []*budget.Finding // made while finalizing
	// startupGap is how long after the JVM's start the recording began
	// (for the recorder start-up finding).
	startupGap time.Duration
}

func newReqData() *reqData {
	return &reqData{threads: map[threadKey]*threadData{}, submits: map[int64]submitRec{},
		terms: termTable{index: map[termKey]int{}}, regions: newRegionTable()}
}

// termTable interns terms.
type termTable struct {
	list  []budget.Term
	index map[termKey]int
}

func (t *termTable) id(term budget.Term) int32 {
	k := termKey{path: strings.Join(term.Path, "\n"), mech: term.Mechanism, kind: term.Kind}
	if i, ok := t.index[k]; ok {
		return int32(i)
	}
	t.index[k] = len(t.list)
	t.list = append(t.list, term)
	return int32(len(t.list) - 1)
}

func (d *reqData) thread(t jfr.Thread) *threadData {
	k := keyOf(t)
	td, ok := d.threads[k]
	if !ok {
		td = &threadData{name: t.Name}
		d.threads[k] = td
	}
	return td
}

func span(ev *jfr.Event) (int64, int64) {
	s := ev.Start.UnixNano()
	return s, s + int64(ev.Duration)
}

// event keeps what the request analysis needs of ev.
func (d *reqData) event(ev *jfr.Event, r *jfr.Rules) {
	switch ev.Type {
	case "latscope.Request":
		s, e := span(ev)
		d.requests = append(d.requests, reqRec{start: s, end: e, thread: keyOf(ev.Thread), id: ev.Req.RequestID, route: ev.Req.Route, tp: ev.Req.Traceparent, cpu: cpuOf(ev), queue: queueOf(ev), workers: ev.Req.Workers})
		d.thread(ev.Thread)
	case "latscope.TaskRun":
		s, e := span(ev)
		d.runs = append(d.runs, runRec{start: s, end: e, thread: keyOf(ev.Thread), rid: ev.Req.RequestID, task: ev.Req.TaskID, cpu: cpuOf(ev)})
		d.thread(ev.Thread)
	case "latscope.TaskSubmit":
		attr := r.Decide(ev.Stack)
		d.submits[ev.Req.TaskID] = submitRec{t: ev.Start.UnixNano(), thread: keyOf(ev.Thread), rid: ev.Req.RequestID,
			term: d.terms.id(budget.Term{Frame: attr.App, Path: pathOf(r, ev.Stack, attr.AppIndex, attr.App), Mechanism: QueueMechanism, Kind: frame.Sync})}
	case "latscope.TaskWait":
		s, e := span(ev)
		attr := r.Decide(ev.Stack)
		t := d.terms.id(budget.Term{Frame: attr.App, Path: pathOf(r, ev.Stack, attr.AppIndex, attr.App), Mechanism: libraryCall(ev.Stack, attr.AppIndex), Kind: frame.Sync})
		td := d.thread(ev.Thread)
		td.tasks = append(td.tasks, taskWaitRec{start: s, end: e, task: ev.Req.TaskID, rid: ev.Req.RequestID, term: t})
	case "latscope.Hold":
		s, e := span(ev)
		attr := r.Decide(ev.Stack)
		app, path := attr.App, pathOf(r, ev.Stack, attr.AppIndex, attr.App)
		// JFR took the stack at the release; the hold is named by the
		// method that began it, right after the acquire (ConnPool.borrow)
		if site := ev.Req.Site; site != "" && site != app && r.IsApp(site) {
			if len(path) > 0 {
				path = append(path[:len(path)-1:len(path)-1], site)
			} else {
				path = []string{site}
			}
			app = site
		}
		name := ev.Req.Name
		if name == "" {
			name = app
		}
		td := d.thread(ev.Thread)
		td.holds = append(td.holds, holdRec{start: s, end: e, cpu: cpuOf(ev), frame: app,
			term: d.terms.id(budget.Term{Frame: app, Path: path, Mechanism: HoldMechanism + " " + name, Kind: frame.Running})})
	case "jdk.ExecutionSample":
		td := d.thread(ev.Thread)
		attr := r.Decide(ev.Stack)
		td.samples = append(td.samples, sampleRec{t: ev.Start.UnixNano(), region: d.regions.id(pathOf(r, ev.Stack, attr.AppIndex, attr.App))})
	default:
		if _, ok := jfr.WaitKind(ev.Type); !ok {
			return
		}
		attr := r.Decide(ev.Stack)
		app, mech, kind := attr.Term(ev.Type, ev.MonitorClass)
		s, e := span(ev)
		td := d.thread(ev.Thread)
		td.waits = append(td.waits, waitRec{start: s, end: e, kind: kind,
			term: d.terms.id(budget.Term{Frame: app, Path: pathOf(r, ev.Stack, attr.AppIndex, app), Mechanism: mech, Kind: kind})})
	}
}

// cpuOf is the library's cpuTime of a request or task run in ns, or -1.
func cpuOf(ev *jfr.Event) int64 {
	if !ev.Req.HasCPU {
		return -1
	}
	return int64(ev.Req.CPU)
}

// queueOf is a request's queueTime in ns, or -1.
func queueOf(ev *jfr.Event) int64 {
	if !ev.Req.HasQueue {
		return -1
	}
	return int64(ev.Req.Queue)
}

// libraryCall returns the library method the application frame at
// appIndex called (io.latscope.Tasks.await, io.latscope.Tasks$Task.get):
// the outermost io.latscope frame beneath it.
func libraryCall(stack []jfr.Frame, appIndex int) string {
	if appIndex < 0 {
		appIndex = len(stack)
	}
	for i := appIndex - 1; i >= 0; i-- {
		if strings.HasPrefix(stack[i].Method, "io.latscope.") {
			return stack[i].Method
		}
	}
	return "io.latscope.Tasks"
}

// HoldMechanism begins the mechanism of a hold's CPU term: the CPU a
// thread used while it held a lock or pooled resource that the library
// marks (latscope.Hold, io.latscope.Holds), followed by the hold's name.
const HoldMechanism = "on CPU, holding"

// QueueMechanism is the mechanism of the time a task handed to an executor
// waited for a thread (from latscope.TaskSubmit to latscope.TaskRun).
const QueueMechanism = "executor queue (submit → run)"

// pathOf is the application call path of a stack (leaf first): its
// application frames from the outermost down to the one at appIndex,
// outermost first, direct recursion folded; [app] when app is not an
// application frame of the stack.
func pathOf(r *jfr.Rules, stack []jfr.Frame, appIndex int, app string) []string {
	if app == "" {
		return nil
	}
	if appIndex < 0 || appIndex >= len(stack) || stack[appIndex].Method != app {
		return []string{app}
	}
	var path []string
	for i := len(stack) - 1; i >= appIndex; i-- {
		m := stack[i].Method
		if r.IsApp(m) && (len(path) == 0 || path[len(path)-1] != m) {
			path = append(path, m)
		}
	}
	return path
}

// ms converts nanoseconds to a time.Duration for messages.
func ms(ns int64) time.Duration { return time.Duration(ns) }
