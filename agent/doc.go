// Package agent makes a Go service explain its own latency with latscope:
// one import, a few lines at start-up.
//
//   - Handler (middleware) makes every HTTP request a runtime/trace task named
//     by its route pattern, so `latscope analyze` groups requests exactly.
//     With chi, gin, echo or gorilla/mux, the middleware of package
//     agentchi, agentgin, agentecho or agentmux does it inside the router
//     (Begin), once the router has matched the route; package agent links
//     no router.
//   - Transport wraps outbound HTTP calls in regions and sends a W3C
//     traceparent; WrapConnector/WrapDriver (database/sql) put each query in
//     a region, package agentpgx does the same for pgx v5 (a query tracer
//     and a query rewriter, apart so that database/sql services do not
//     compile pgx), and the database/sql wrapper and Comment prepend a
//     sqlcommenter comment with a traceparent,
//     so the application's DB span can be joined with PostgreSQL's own log
//     line for the same statement.
//   - A flight recorder (runtime/trace.FlightRecorder) keeps the last seconds
//     of the execution trace in memory; when a request is slower than a
//     threshold (fixed, or the p99 of the last N requests) it writes a
//     snapshot to a bounded directory, to be read by `latscope analyze`.
//     Snapshots carry the process CPU counter and host samples as trace logs,
//     so the analysis needs nothing else.
//   - Endpoints (opt-in, loopback by default, optional bearer token) serve
//     the snapshots, the live flight-recorder window and on-demand traces.
//   - Metrics (opt-in, Options.Metrics, an agent.Metrics; package agentprom
//     is the Prometheus one, so that this package links no Prometheus
//     client): per route, request latency split by whether the request made
//     a DB call, its time in DB and outbound calls, each DB call; the host's
//     CFS throttling, CPU pressure and steal, read at scrape time; and a
//     stall counter from the CPU-availability probe. They cost tens to a few
//     hundred ns per request (docs/metrics.md), so fleets can be compared
//     minute by minute.
//
// What goes into the trace under which log category is a contract with the
// analysis tools: package tracelog holds it (categories, region names,
// message formats, the traceparent type), and docs/agent.md lists it.
//
// Security: execution traces contain function names, file paths, route
// patterns, SQL traceparents and every value logged with trace.Log. Serve the
// endpoints on loopback or behind a token, never on a public listener. The
// snapshot directory must be the service user's own (0700 by default; New
// refuses another user's), and the agent lists, serves and deletes only
// regular files it owns there. Window copies over the endpoints are rate
// limited and on-demand traces capped in size; the endpoints' own server
// (Options.Listen) closes idle and slow connections and caps open ones.
// Nothing a client sends can grow the agent's state or kill the process
// through it: at most Options.MaxRoutes routes are kept apart (the rest
// are OtherRoute), and every string handed to the runtime tracer is cut
// to tracelog.MaxString bytes. docs/security.md has the threat model.
//
// Only one flight recorder may run in a process (a runtime limit), so only
// one Agent with a recorder may be open at a time.
//
// The agent never leaves a region open across calls it does not control:
// every region it writes begins and ends on one goroutine, so a trace stays
// readable whichever goroutine closes a pgx query's rows (see agentpgx.QueryTracer).
package agent
