// Package pprofexport writes an analysis result as pprof profiles
// (github.com/google/pprof/profile), so `go tool pprof -http`, Pyroscope and
// Parca show where request time went as flame graphs:
//
//   - Wall: in-request goroutine time (the wait sum): off-CPU waits under
//     their blocking stacks, running time spread over the in-request CPU
//     sample stacks in proportion to their samples, and runnable time;
//   - OffCPU: the off-CPU waits alone, labelled with kind, mechanism and
//     application frame;
//   - Critical: the critical path: critical waits under their request-side
//     blocking stacks with the root cause as a leaf, and the request
//     goroutines' own running, runnable and unexplained time.
//
// Values are totals in nanoseconds over a group's counted requests, never
// per-request means: divide by the request count (the "requests" numeric
// label and the profile comment) for the mean. The totals equal the
// result's sums exactly: Wall is Σ StackWaits.Wait + Running.Wait +
// Runnable.Wait, OffCPU is Σ StackWaits.Wait (= Σ Terms.Wait), and Critical
// is Σ StackWaits.Critical + Running.Critical + Runnable.Critical + Unknown,
// which is Σ Latencies when the group's PathMismatch is zero.
//
// States without a stack are pseudo-frames in brackets: "[running]",
// "[runnable]", "[unknown]", and every off-CPU stack ends in a leaf naming
// its kind ("[network]", "[sync]", …) so a flame graph shows why the
// goroutine was off the CPU.
package pprofexport
