// Package queueing solves queueing network models: exact Mean Value
// Analysis (MVA) for closed single-class networks of load-independent,
// multi-server and delay stations (multi-server stations through their
// marginal queue-length probabilities), the Schweitzer–Bard approximation
// with Seidmann's multi-server decomposition for large populations, and
// open M/M/c formulas through Erlang C.
//
// It also turns a latency budget (budget.Result) into such a network — the
// service demand of one request at each shared resource: the CPUs, each
// connection pool, each lock and the pure delays — and predicts what-ifs by
// solving the network before and after the change with the measured client
// count (docs/method.md, "Queueing model").
//
// The package does no I/O. All times are seconds unless a name says ms.
package queueing
