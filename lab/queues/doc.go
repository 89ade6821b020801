// Package queues is the acceptance lab of the queueing model
// (docs/method.md, "Queueing model"): a service with a deliberately small
// connection pool (a buffered-channel semaphore) and tight cores
// (GOMAXPROCS), under closed load, where removing the upstream call
// saturates the pool in one case and the CPU in the other. For each case
// and client count it records a "before" trace, predicts the fix from it
// with the one prediction engine behind analyze, compare and predict
// (whatif.Evaluate: the queueing model's change in queueing, anchored on
// the trace's simulated timeline), applies the fix for real, re-measures
// and checks the prediction's mean and throughput against the measurement.
//
// Ground truth comes from the clients' own clocks and counts, never from
// latscope.
package queues
