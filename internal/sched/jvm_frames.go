package sched

import (
	"slices"
	"strings"

	"github.com/latscope/latscope/internal/jfr"
)

// JVMGroup is what a JDK concurrency frame does: the groups of the
// scheduler-churn analysis (docs/jfr-churn.md).
type JVMGroup uint8

// JVM churn groups. JVMOther is every sample the table leaves out: the
// application's work, and the JDK's other code.
const (
	JVMOther      JVMGroup = iota
	JVMFJIdle              // a ForkJoinPool worker finding work or going idle: scan, awaitWork, runWorker
	JVMFJRun               // a ForkJoinPool running a task: topLevelExec, doExec, the task adapters
	JVMFJSubmit            // submitting to a ForkJoinPool and waking a worker: execute, externalPush, signalWork
	JVMFJJoin              // a thread helping or compensating while it joins: helpJoin, tryCompensate
	JVMPark                // LockSupport and Unsafe park/unpark, Thread.onSpinWait and yield
	JVMExecutor            // ThreadPoolExecutor's machinery: getTask, execute, runWorker
	JVMQueue               // blocking queues and AQS locks: take, poll, offer, acquire, signal
	JVMThreadLife          // starting and ending threads: Thread.start, FJP createWorker, TPE addWorker
	NumJVMGroups
)

var jvmGroupNames = [...]string{
	JVMOther: "other", JVMFJIdle: "fork-join find work/idle", JVMFJRun: "fork-join run task",
	JVMFJSubmit: "fork-join submit/wake", JVMFJJoin: "fork-join join/compensate", JVMPark: "park/unpark",
	JVMExecutor: "thread-pool executor", JVMQueue: "blocking queue/lock", JVMThreadLife: "thread start/exit",
}

// String returns the group's name as used in text and JSON.
func (g JVMGroup) String() string {
	if int(g) < len(jvmGroupNames) {
		return jvmGroupNames[g]
	}
	return "unknown"
}

// MarshalText encodes the group by name.
func (g JVMGroup) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// Machinery reports whether the group is pool machinery (any group but
// JVMOther).
func (g JVMGroup) Machinery() bool { return g != JVMOther && g < NumJVMGroups }

// JVMPattern is one row of the frame table: a frame matches when its
// Method equals Name, or, when Name ends in "*", starts with the rest.
// A Defer row lets the caller decide: when a frame further from the leaf
// matches a row too, that row's group is the sample's, else this one's (a
// work queue's slot access is a push beneath lockedPush, a poll beneath
// topLevelExec).
type JVMPattern struct {
	Group JVMGroup
	Name  string
	Defer bool
}

func (p JVMPattern) match(method string) bool {
	if prefix, ok := strings.CutSuffix(p.Name, "*"); ok {
		return strings.HasPrefix(method, prefix)
	}
	return method == p.Name
}

const (
	fjp = "java.util.concurrent.ForkJoinPool."
	fjq = "java.util.concurrent.ForkJoinPool$WorkQueue."
	fjt = "java.util.concurrent.ForkJoinTask"
	tpe = "java.util.concurrent.ThreadPoolExecutor"
)

// DefaultJVMPatterns is the frame table of the churn analysis, for JDK
// 17 to 21. The first row that matches a frame decides its group; a frame
// no row matches is not machinery. The table is tested against real
// recordings (internal/sched/jvm_test.go, and internal/jfr/churn_test.go on the kept recordings).
var DefaultJVMPatterns = slices.Concat(
	jvmRows(JVMFJSubmit, fjp+"execute", fjp+"submit", fjp+"invoke", fjp+"externalPush", fjp+"externalSubmit",
		fjp+"externalQueue", fjp+"submissionQueue", fjp+"poolSubmit", fjp+"signalWork", fjp+"tryAddWorker",
		fjq+"push", fjq+"lockedPush", fjq+"growArray", fjq+"tryLockPhase", fjq+"releasePhaseLock", fjt+".fork"),
	jvmRows(JVMThreadLife, fjp+"createWorker", fjp+"registerWorker", fjp+"deregisterWorker",
		"java.util.concurrent.ForkJoinPool$DefaultForkJoinWorkerThreadFactory.*",
		"java.util.concurrent.ForkJoinWorkerThread.<init>", "java.util.concurrent.ForkJoinWorkerThread.onStart",
		"java.util.concurrent.ForkJoinWorkerThread.onTermination", tpe+".addWorker", tpe+".processWorkerExit",
		tpe+"$Worker.<init>", "java.lang.Thread.start", "java.lang.Thread.start0", "java.lang.Thread.exit",
		"java.util.concurrent.Executors$DefaultThreadFactory.newThread"),
	jvmRows(JVMFJJoin, fjp+"helpJoin", fjp+"helpComplete", fjp+"tryCompensate", fjp+"compensatedBlock",
		fjp+"helpQuiescePool", fjp+"awaitQuiescence", fjt+".awaitDone",
		fjt+".join", fjt+".get", fjq+"tryRemoveAndExec", fjq+"helpComplete"),
	jvmRows(JVMFJRun, fjq+"topLevelExec", fjq+"execLocalTasks", fjt+".doExec", fjt+".setDone",
		fjt+".setCompletion", fjt+".signalWaiters", fjt+"$RunnableExecuteAction.*", fjt+"$AdaptedRunnable*",
		fjt+"$AdaptedCallable.*", fjt+"$AdaptedInterruptible*", "java.util.concurrent.CompletableFuture$AsyncRun.exec",
		"java.util.concurrent.CompletableFuture$AsyncSupply.exec"),
	jvmRows(JVMFJIdle, fjp+"scan", fjp+"awaitWork", fjp+"runWorker", fjp+"canStop", fjp+"tryTerminate",
		fjp+"compareAndExchangeCtl", fjp+"compareAndSetCtl", fjp+"getAndAddCtl"),
	jvmDeferRows(JVMFJIdle, fjq+"*"),
	// JDK 17's AbstractQueuedSynchronizer.ConditionObject.await blocks
	// through ForkJoinPool.managedBlock: a queue's caller decides
	jvmDeferRows(JVMFJJoin, fjp+"managedBlock", fjp+"unmanagedBlock"),
	jvmRows(JVMFJIdle, "java.util.concurrent.ForkJoinWorkerThread.run"),
	jvmRows(JVMPark, "java.util.concurrent.locks.LockSupport.*", "jdk.internal.misc.Unsafe.park",
		"jdk.internal.misc.Unsafe.unpark", "java.lang.Thread.onSpinWait", "java.lang.Thread.yield"),
	jvmRows(JVMExecutor, tpe+".getTask", tpe+".execute", tpe+".runWorker", tpe+".beforeExecute",
		tpe+".afterExecute", tpe+".tryTerminate", tpe+"$Worker.*", "java.util.concurrent.AbstractExecutorService.submit",
		"java.util.concurrent.FutureTask.run", "java.util.concurrent.FutureTask.set",
		"java.util.concurrent.FutureTask.finishCompletion", "java.util.concurrent.ScheduledThreadPoolExecutor*"),
	jvmRows(JVMQueue, "java.util.concurrent.LinkedBlockingQueue.*", "java.util.concurrent.LinkedBlockingDeque.*",
		"java.util.concurrent.ArrayBlockingQueue.*", "java.util.concurrent.SynchronousQueue*",
		"java.util.concurrent.LinkedTransferQueue*", "java.util.concurrent.DelayQueue.*",
		"java.util.concurrent.PriorityBlockingQueue.*", "java.util.concurrent.locks.AbstractQueuedSynchronizer*",
		"java.util.concurrent.locks.ReentrantLock*"),
)

// jvmScope is where the walk from the leaf may go: the JDK's concurrency
// code and what it inlines (VarHandle guards, Unsafe, Thread). The walk
// stops at the first frame outside it, so a task's own JDK calls (a
// HashMap, a String) never make it machinery. The helpers the pool's code calls and the JIT inlines into it (Class.cast
// beneath a VarHandle, Objects.requireNonNull, System.nanoTime in a timed
// park) are in it too.
var jvmScope = []string{"java.util.concurrent.", "jdk.internal.misc.Unsafe.", "java.lang.Thread.", "java.lang.invoke.",
	"java.lang.Class.cast", "java.util.Objects.", "jdk.internal.util.Preconditions.", "java.lang.System.nanoTime",
	"java.lang.System.currentTimeMillis"}

// JVMFrames decides the churn group of a stack.
type JVMFrames struct {
	Patterns []JVMPattern
	Scope    []string
}

// DefaultJVMFrames is the table of `latscope analyze`.
var DefaultJVMFrames = &JVMFrames{Patterns: DefaultJVMPatterns, Scope: jvmScope}

// rows are the patterns names of group g.
func jvmRows(g JVMGroup, names ...string) []JVMPattern {
	out := make([]JVMPattern, len(names))
	for i, n := range names {
		out[i] = JVMPattern{Group: g, Name: n}
	}
	return out
}

// jvmDeferRows are rows that let the caller decide.
func jvmDeferRows(g JVMGroup, names ...string) []JVMPattern {
	out := jvmRows(g, names...)
	for i := range out {
		out[i].Defer = true
	}
	return out
}

// Classify returns the group of the stack (leaf first) and the frame that
// decided it. It walks from the leaf across frames in Scope; the innermost
// of them that a pattern matches decides. The walk stops at the first
// frame outside Scope: a sample in a task's own code is JVMOther even
// though the pool's frames lie beneath it.
func (c *JVMFrames) Classify(stack []jfr.Frame) (JVMGroup, string) {
	deferred, at := JVMOther, ""
	for _, f := range stack {
		if !inJVMScope(f.Method, c.Scope) {
			break
		}
		p, ok := c.row(f.Method)
		switch {
		case !ok:
		case !p.Defer:
			return p.Group, f.Method
		case deferred == JVMOther:
			deferred, at = p.Group, f.Method
		}
	}
	return deferred, at
}

// ParkCause returns what a park waited in: the group of the first frame
// beneath the park frames that the table matches (JVMFJIdle for a
// ForkJoinPool worker in awaitWork, JVMQueue or JVMExecutor for a
// ThreadPoolExecutor worker in getTask), or JVMOther.
func (c *JVMFrames) ParkCause(stack []jfr.Frame) JVMGroup {
	for _, f := range stack {
		if !inJVMScope(f.Method, c.Scope) {
			break
		}
		switch g := c.group(f.Method); g {
		case JVMOther, JVMPark:
			continue
		case JVMQueue:
			if hasGetTask(stack) {
				return JVMExecutor
			}
			return g
		default:
			return g
		}
	}
	return JVMOther
}

func hasGetTask(stack []jfr.Frame) bool {
	for _, f := range stack {
		if f.Method == tpe+".getTask" {
			return true
		}
	}
	return false
}

// inJVMScope reports whether method starts with one of scope.
func inJVMScope(method string, scope []string) bool {
	for _, p := range scope {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

func (c *JVMFrames) group(method string) JVMGroup {
	p, _ := c.row(method)
	return p.Group
}

// row returns the first row that matches method.
func (c *JVMFrames) row(method string) (JVMPattern, bool) {
	for _, p := range c.Patterns {
		if p.match(method) {
			return p, true
		}
	}
	return JVMPattern{}, false
}
