// Package demotrace runs small, self-contained request scenarios on real
// parts — a net/http server, an upstream HTTP server and a TCP server
// standing in for a database, all on 127.0.0.1 — and records them with the
// real runtime tracer. Tests use the traces as fixtures with known ground
// truth; `latscope demo-trace` writes one for a new user to analyse.
//
// Only one scenario may record at a time in a process (runtime/trace allows
// one tracer).
package demotrace
