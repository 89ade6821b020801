// Package sched finds runtime overhead that hides in the Go scheduler
// (docs/method.md §9): CPU the process spends finding, parking and waking
// goroutines and OS threads instead of running its own code.
//
// It reads CPU samples — from an execution trace recorded while the CPU
// profiler ran, or from a pprof CPU profile — and classifies each sample by
// the innermost frame that the frame table (DefaultFrames) knows: scheduler,
// garbage collector, instrumentation (tracer and profiler), or other (the
// application and the rest of the runtime). From the trace it also counts P
// starts and stops, goroutine wakeups and creations clustered into bursts,
// the runnable wait after each wakeup, and the Ps in use, which it compares
// with the CPU quota when one is given.
//
// The trace analysis is one streaming pass: New, Event for every record,
// Finalize. Its memory is bounded by the live goroutines and the distinct
// stacks, not by the length of the trace.
//
// A Finding is raised when the scheduler's share of CPU exceeds
// DefaultThresholds.SchedShare (10 %, docs/method.md §9), naming the
// application frames that create or wake the goroutines of the bursts, and
// when GOMAXPROCS is above the CPUs the process may use.
//
// The same question for the JVM is JVMChurn's (jvm.go, docs/jfr-churn.md):
// fed a JFR recording's events — execution samples, thread parks, the
// recording's settings — by the caller that reads them, it classifies
// each sample by the pool machinery its frames belong to (JVMFrames) and
// judges the share against the same rule, with the thresholds, intervals
// and words of package churn that both runtimes share.
//
// BUG: Ps are counted when they run; an idle P never appears in a trace, so
// Procs.PsSeen is a lower bound of GOMAXPROCS. Give Host.GOMAXPROCS when it
// is known.
package sched
