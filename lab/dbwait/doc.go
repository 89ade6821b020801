// Package dbwait is the lab scenario of docs/method.md §8: was it the
// database? A small service (Serve, run by the lab as its own process with
// `latscope-lab dbwait-serve`) looks rows up by primary key every 20 ms,
// each statement in a trace region with its traceparent logged inside and
// sent in a SQL comment, and logs host samples into its execution trace
// every 100 ms. The scenario runs it under six conditions — baseline, a
// table lock held by another session, a SIGSTOP while a query waits on that
// lock, a CFS quota on its cgroup with CPU-heavy work, the same work without
// a quota, and a TCP proxy that delays every response by 30 ms — joins each
// run's trace with PostgreSQL's jsonlog (package dbwait at the module root)
// and checks that each condition gets its verdict.
package dbwait
