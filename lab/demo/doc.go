// Package demo is the lab's demo service: the seed experiment's one-endpoint service,
// written in Go.
//
// GET /work runs four segments, each inside a runtime/trace region of a
// per-request task named "request":
//
//	cpu       SHA-256 for CPUWork (1 ms) of CPU                 demo.cpuWork
//	upstream  blocking HTTP GET to the upstream (100 ms)        demo.callUpstream
//	db        SELECT pg_sleep(0.05) through a pool of 10        demo.queryDB
//	shared    SHA-256 for SharedWork (2 ms) under one mutex     demo.sharedSection
//
// Each segment is its own non-inlined function, so that in a trace the wait
// or the CPU sample has that function as its application frame.
//
// The Mode decides the shape of a request: ModeSerial runs the four in
// order; ModeConcurrent overlaps upstream and db; ModeFixed also moves the
// shared section's work out of the critical section, leaving only the update
// under the lock. See docs/demo-service.md for what the lab expects of each.
//
// The handler also serves /debug/pprof/ (so a CPU profile and an execution
// trace can be captured in the same window), /metrics (Prometheus, with the
// process and Go collectors) and /healthz.
package demo
