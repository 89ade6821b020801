// Package budget is latscope's streaming analysis core. It consumes the
// records of one Go execution trace (package tracein) in a single pass and,
// for every request (a runtime/trace task that begins and ends inside the
// trace, or an inferred net/http server request when the trace has no
// tasks), decomposes its latency two ways (docs/method.md §2–§4):
//
//   - the wait sum: the goroutine time of all the request's goroutines, by
//     term (application frame, mechanism, kind), plus running and runnable
//     time. It is not a decomposition once a request forks;
//   - the critical path: a backwards walk over wakeup edges (package
//     critpath) whose pieces tile the request's latency exactly.
//
// It also evaluates what-if predictions per request as it goes. Memory is
// bounded by the open requests and the live goroutines, not by the trace.
//
// Usage: a := budget.New(opts, stacks); for each record a.Event(ev);
// res := a.Finalize(). The analyser does no I/O and has no clock.
package budget
