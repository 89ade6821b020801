// Package burst is the lab scenario of docs/method.md §9: bursty work that wakes a
// whole pool at once, so the scheduler's own scan/park/wake machinery costs
// a large share of CPU, and the fix that routes the same work to a small
// steady pool.
//
// A Service receives a batch of events at a fixed interval (20,000 every
// 100 ms by default) and fans each event out in one of three modes: its own
// goroutine (spawn), a pool as wide as GOMAXPROCS (pool), or two long-lived
// workers fed by a buffered channel (fixed). Each event costs a few SHA-256
// rounds. `latscope-lab burst-serve` runs a Service as its own OS process
// with GOMAXPROCS set high (32, as in the scheduler case of docs/method.md
// §10), so that its CPU can be read alone from /proc/PID/stat; it serves its
// counters, a CPU profile and an execution trace with CPU samples over
// loopback HTTP.
//
// The scenario `latscope-lab burst` runs every variant, measures CPU per
// event with the independent counter, takes the scheduler's share of CPU
// from a CPU profile (package sched), predicts the saving of the fix from
// it, and compares the prediction with the fixed variant's measurement.
package burst
