package tracelog

// CaptureUserAgent begins the User-Agent of every request `latscope
// capture` sends to a service (its /metrics reads, and pprof's profile and
// trace): the agent serves them but never counts them as the service's
// requests — no task, no metric, no trigger of the slow-request recorder —
// since a tracer may hold a request that ended just before it started.
const CaptureUserAgent = "latscope-capture"
