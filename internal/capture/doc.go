// Package capture fetches a live capture from a running Go service that
// serves net/http/pprof (no latscope agent needed): an execution trace and,
// over the same window, a CPU profile (so the trace carries CPU samples),
// plus the process's CPU counter from Prometheus metrics before and after
// (process_cpu_seconds_total: an instrument independent of the tracer).
//
// Run writes everything into one directory, atomically: the files go into
// DIR.partial, which is renamed to DIR only when every download completed;
// on any failure DIR.partial is removed, so a DIR that exists is complete.
// The directory holds:
//
//	trace.out     the execution trace (latscope analyze trace.out)
//	cpu.pprof     the CPU profile of the same window (unless NoProfile)
//	capture.json  Meta: what was fetched, when, and the CPU counter
//
// Errors say what to do: connection refused, credentials wanted (pass a
// token), net/http/pprof not mounted, timed out, download cut short.
package capture
