// Package dbwait tells, for each database call an application made, how
// much of its time the database spent on the statement and where the rest
// went (docs/method.md §8).
//
// An application DB span is a trace region (trace.StartRegion) inside which
// the statement's W3C traceparent was logged under SQLLogCategory
// (trace.Log(ctx, "latscope.sql", tp.String())), the convention of package
// agent; the same traceparent travels in a sqlcommenter comment in the SQL,
// so PostgreSQL's jsonlog holds the statement's own duration next to it
// (package pglog). The join is by traceparent, never by time.
//
// For each span: app time (region end − begin), DB time (the statement's
// summed phases, lock waits included) and the difference, app − DB. A
// difference up to Options.Threshold (10 ms) means the time was spent inside
// the database; a larger one is time outside it, classified with the host
// samples (package hostsig) whose interval covers the span and with the
// trace itself (and, first, with the agent's CPU-availability probe when
// the trace has it: on time for half the difference, no CPU cause can
// explain it, and the verdict is network unless the goroutine was
// runnable):
//
//   - throttled: the cgroup's nr_throttled rose, its throttled time covers
//     at least half the difference, and its CPU pressure (PSI some; the
//     machine's when the cgroup has none) rose with it;
//   - steal: /proc/stat steal per CPU rose by at least half the difference
//     (the whole difference when the CPU count is unknown), and the trace
//     has a stretch with no event from any goroutine or P covering at
//     least half of it: the hypervisor took the process's CPU (Classify);
//   - paused: the trace has a stretch of at least Options.MinPause (with
//     the probe late, ProbePauses of its periods) with no event from any
//     goroutine or P inside the outside time, covering at least half of
//     it, while the counters stayed flat (no throttling, run-queue wait
//     pro-rated to the stretch under half of it): the process did not run
//     at all (SIGSTOP, a debugger, a frozen cgroup);
//   - runnable: CPU contention without throttling: the span's goroutine was
//     runnable (waiting for a P) for at least half the difference, or the
//     process's threads waited on the kernel's run queue (schedstat) that
//     long over the sampled interval — busy neighbours or the process's own
//     CPU work (an addition to the four causes of docs/method.md §8, which would call
//     this "network");
//   - network: all of the above could be checked and none holds; without
//     a recording of the database host, on a host under CPU pressure, at
//     confidence low with db-cpu as Query.Alternative ("network or
//     db-cpu": the backend may have waited for a CPU, which looks the
//     same from the application's host) when the statement waited past
//     the trace's usual wait (the network floor, else the median
//     difference within the threshold) for half its difference or more —
//     a path's wait is the same for every statement, a backend's varies;
//   - unknown: no host sample covers the span, or a source needed to rule a
//     cause out (throttling or steal) is absent.
//
// Every verdict carries its evidence (Evidence), the numbers it was decided on.
//
// The Analyzer is a pure consumer: it is fed trace records (TraceEvent),
// statements (Statement) and host samples (Sample, or the samples found in
// the trace's LogCategory logs) in any order of sources, and Finalize joins
// and classifies. It reads no files and prints nothing; FeedTrace,
// FeedPGLog, ReadSamples and ReadMySQLCSV are the read loops; the text and
// JSON reports are package dbwaitreport's (internal/report/dbwaitreport).
//
// Clocks: trace times are CLOCK_MONOTONIC, as are hostsig sample times, so
// samples line up with spans without conversion. PostgreSQL logs wall-clock
// end times at millisecond precision; the trace's clock snapshots (Go 1.25+)
// map trace times to wall time, which places the statement inside its span
// and so locates the outside time. The join and the difference do not depend
// on clocks; only the "paused" rule's search for an event-free stretch does.
//
// BUG(dbwait): tracein passes on the kinds of trace events analyses use
// (goroutine and P transitions, tasks, regions, logs, CPU samples, syncs);
// a stretch that holds only other kinds (GC ranges, metrics) counts as
// event-free. In practice every GC phase also moves goroutines.
package dbwait
