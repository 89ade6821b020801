package jfr

import (
	"slices"
	"strings"
)

// ChurnGroup is what a JDK concurrency frame does: the groups of the
// scheduler-churn analysis (docs/jfr-churn.md).
type ChurnGroup uint8

// Churn groups. ChurnOther is every sample the table leaves out: the
// application's work, and the JDK's other code.
const (
	ChurnOther      ChurnGroup = iota
	ChurnFJIdle                // a ForkJoinPool worker finding work or going idle: scan, awaitWork, runWorker
	ChurnFJRun                 // a ForkJoinPool running a task: topLevelExec, doExec, the task adapters
	ChurnFJSubmit              // submitting to a ForkJoinPool and waking a worker: execute, externalPush, signalWork
	ChurnFJJoin                // a thread helping or compensating while it joins: helpJoin, tryCompensate
	ChurnPark                  // LockSupport and Unsafe park/unpark, Thread.onSpinWait and yield
	ChurnExecutor              // ThreadPoolExecutor's machinery: getTask, execute, runWorker
	ChurnQueue                 // blocking queues and AQS locks: take, poll, offer, acquire, signal
	ChurnThreadLife            // starting and ending threads: Thread.start, FJP createWorker, TPE addWorker
	NumChurnGroups
)

var churnGroupNames = [...]string{
	ChurnOther: "other", ChurnFJIdle: "fork-join find work/idle", ChurnFJRun: "fork-join run task",
	ChurnFJSubmit: "fork-join submit/wake", ChurnFJJoin: "fork-join join/compensate", ChurnPark: "park/unpark",
	ChurnExecutor: "thread-pool executor", ChurnQueue: "blocking queue/lock", ChurnThreadLife: "thread start/exit",
}

// String returns the group's name as used in text and JSON.
func (g ChurnGroup) String() string {
	if int(g) < len(churnGroupNames) {
		return churnGroupNames[g]
	}
	return "unknown"
}

// MarshalText encodes the group by name.
func (g ChurnGroup) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// Machinery reports whether the group is pool machinery (any group but
// ChurnOther).
func (g ChurnGroup) Machinery() bool { return g != ChurnOther && g < NumChurnGroups }

// ChurnPattern is one row of the frame table: a frame matches when its
// Method equals Name, or, when Name ends in "*", starts with the rest.
// A Defer row lets the caller decide: when a frame further from the leaf
// matches a row too, that row's group is the sample's, else this one's (a
// work queue's slot access is a push beneath lockedPush, a poll beneath
// topLevelExec).
type ChurnPattern struct {
	Group ChurnGroup
	Name  string
	Defer bool
}

func (p ChurnPattern) match(method string) bool {
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

// DefaultChurnPatterns is the frame table of the churn analysis, for JDK
// 17 to 21. The first row that matches a frame decides its group; a frame
// no row matches is not machinery. The table is tested against real
// recordings (internal/jfr/churn_test.go).
var DefaultChurnPatterns = slices.Concat(
	rows(ChurnFJSubmit, fjp+"execute", fjp+"submit", fjp+"invoke", fjp+"externalPush", fjp+"externalSubmit",
		fjp+"externalQueue", fjp+"submissionQueue", fjp+"poolSubmit", fjp+"signalWork", fjp+"tryAddWorker",
		fjq+"push", fjq+"lockedPush", fjq+"growArray", fjq+"tryLockPhase", fjq+"releasePhaseLock", fjt+".fork"),
	rows(ChurnThreadLife, fjp+"createWorker", fjp+"registerWorker", fjp+"deregisterWorker",
		"java.util.concurrent.ForkJoinPool$DefaultForkJoinWorkerThreadFactory.*",
		"java.util.concurrent.ForkJoinWorkerThread.<init>", "java.util.concurrent.ForkJoinWorkerThread.onStart",
		"java.util.concurrent.ForkJoinWorkerThread.onTermination", tpe+".addWorker", tpe+".processWorkerExit",
		tpe+"$Worker.<init>", "java.lang.Thread.start", "java.lang.Thread.start0", "java.lang.Thread.exit",
		"java.util.concurrent.Executors$DefaultThreadFactory.newThread"),
	rows(ChurnFJJoin, fjp+"helpJoin", fjp+"helpComplete", fjp+"tryCompensate", fjp+"compensatedBlock",
		fjp+"helpQuiescePool", fjp+"awaitQuiescence", fjt+".awaitDone",
		fjt+".join", fjt+".get", fjq+"tryRemoveAndExec", fjq+"helpComplete"),
	rows(ChurnFJRun, fjq+"topLevelExec", fjq+"execLocalTasks", fjt+".doExec", fjt+".setDone",
		fjt+".setCompletion", fjt+".signalWaiters", fjt+"$RunnableExecuteAction.*", fjt+"$AdaptedRunnable*",
		fjt+"$AdaptedCallable.*", fjt+"$AdaptedInterruptible*", "java.util.concurrent.CompletableFuture$AsyncRun.exec",
		"java.util.concurrent.CompletableFuture$AsyncSupply.exec"),
	rows(ChurnFJIdle, fjp+"scan", fjp+"awaitWork", fjp+"runWorker", fjp+"canStop", fjp+"tryTerminate",
		fjp+"compareAndExchangeCtl", fjp+"compareAndSetCtl", fjp+"getAndAddCtl"),
	deferRows(ChurnFJIdle, fjq+"*"),
	// JDK 17's AbstractQueuedSynchronizer.ConditionObject.await blocks
	// through ForkJoinPool.managedBlock: a queue's caller decides
	deferRows(ChurnFJJoin, fjp+"managedBlock", fjp+"unmanagedBlock"),
	rows(ChurnFJIdle, "java.util.concurrent.ForkJoinWorkerThread.run"),
	rows(ChurnPark, "java.util.concurrent.locks.LockSupport.*", "jdk.internal.misc.Unsafe.park",
		"jdk.internal.misc.Unsafe.unpark", "java.lang.Thread.onSpinWait", "java.lang.Thread.yield"),
	rows(ChurnExecutor, tpe+".getTask", tpe+".execute", tpe+".runWorker", tpe+".beforeExecute",
		tpe+".afterExecute", tpe+".tryTerminate", tpe+"$Worker.*", "java.util.concurrent.AbstractExecutorService.submit",
		"java.util.concurrent.FutureTask.run", "java.util.concurrent.FutureTask.set",
		"java.util.concurrent.FutureTask.finishCompletion", "java.util.concurrent.ScheduledThreadPoolExecutor*"),
	rows(ChurnQueue, "java.util.concurrent.LinkedBlockingQueue.*", "java.util.concurrent.LinkedBlockingDeque.*",
		"java.util.concurrent.ArrayBlockingQueue.*", "java.util.concurrent.SynchronousQueue*",
		"java.util.concurrent.LinkedTransferQueue*", "java.util.concurrent.DelayQueue.*",
		"java.util.concurrent.PriorityBlockingQueue.*", "java.util.concurrent.locks.AbstractQueuedSynchronizer*",
		"java.util.concurrent.locks.ReentrantLock*"),
)

// churnScope is where the walk from the leaf may go: the JDK's concurrency
// code and what it inlines (VarHandle guards, Unsafe, Thread). The walk
// stops at the first frame outside it, so a task's own JDK calls (a
// HashMap, a String) never make it machinery. The helpers the pool's code calls and the JIT inlines into it (Class.cast
// beneath a VarHandle, Objects.requireNonNull, System.nanoTime in a timed
// park) are in it too.
var churnScope = []string{"java.util.concurrent.", "jdk.internal.misc.Unsafe.", "java.lang.Thread.", "java.lang.invoke.",
	"java.lang.Class.cast", "java.util.Objects.", "jdk.internal.util.Preconditions.", "java.lang.System.nanoTime",
	"java.lang.System.currentTimeMillis"}

// ChurnFrames decides the churn group of a stack.
type ChurnFrames struct {
	Patterns []ChurnPattern
	Scope    []string
}

// DefaultChurnFrames is the table of `latscope analyze`.
var DefaultChurnFrames = &ChurnFrames{Patterns: DefaultChurnPatterns, Scope: churnScope}

// rows are the patterns names of group g.
func rows(g ChurnGroup, names ...string) []ChurnPattern {
	out := make([]ChurnPattern, len(names))
	for i, n := range names {
		out[i] = ChurnPattern{Group: g, Name: n}
	}
	return out
}

// deferRows are rows that let the caller decide.
func deferRows(g ChurnGroup, names ...string) []ChurnPattern {
	out := rows(g, names...)
	for i := range out {
		out[i].Defer = true
	}
	return out
}

// Classify returns the group of the stack (leaf first) and the frame that
// decided it. It walks from the leaf across frames in Scope; the innermost
// of them that a pattern matches decides. The walk stops at the first
// frame outside Scope: a sample in a task's own code is ChurnOther even
// though the pool's frames lie beneath it.
func (c *ChurnFrames) Classify(stack []Frame) (ChurnGroup, string) {
	deferred, at := ChurnOther, ""
	for _, f := range stack {
		if !hasPrefix(f.Method, c.Scope) {
			break
		}
		p, ok := c.row(f.Method)
		switch {
		case !ok:
		case !p.Defer:
			return p.Group, f.Method
		case deferred == ChurnOther:
			deferred, at = p.Group, f.Method
		}
	}
	return deferred, at
}

// ParkCause returns what a park waited in: the group of the first frame
// beneath the park frames that the table matches (ChurnFJIdle for a
// ForkJoinPool worker in awaitWork, ChurnQueue or ChurnExecutor for a
// ThreadPoolExecutor worker in getTask), or ChurnOther.
func (c *ChurnFrames) ParkCause(stack []Frame) ChurnGroup {
	for _, f := range stack {
		if !hasPrefix(f.Method, c.Scope) {
			break
		}
		switch g := c.group(f.Method); g {
		case ChurnOther, ChurnPark:
			continue
		case ChurnQueue:
			if hasGetTask(stack) {
				return ChurnExecutor
			}
			return g
		default:
			return g
		}
	}
	return ChurnOther
}

func hasGetTask(stack []Frame) bool {
	for _, f := range stack {
		if f.Method == tpe+".getTask" {
			return true
		}
	}
	return false
}

func (c *ChurnFrames) group(method string) ChurnGroup {
	p, _ := c.row(method)
	return p.Group
}

// row returns the first row that matches method.
func (c *ChurnFrames) row(method string) (ChurnPattern, bool) {
	for _, p := range c.Patterns {
		if p.match(method) {
			return p, true
		}
	}
	return ChurnPattern{}, false
}
