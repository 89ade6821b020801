package agent

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/latscope/latscope/tracelog"
)

// Options configures an Agent. Start from DefaultOptions; a zero numeric
// field takes the value in DefaultOptions.
type Options struct {
	// Dir receives the snapshots. "" means the default directory,
	// filepath.Join(os.TempDir(), "latscope-<euid>"), created with mode 0700;
	// New refuses it if it exists and is not a directory of the process's
	// effective uid with mode 0700. A Dir that is set is created (with its
	// parents) mode 0700 if missing, and refused unless it is a directory,
	// not a symlink, owned by the effective uid and not writable by group or
	// others. The agent lists, serves and deletes only regular files of its
	// own there. See docs/security.md.
	Dir string
	// NoRecorder leaves the flight recorder off: Handler then only makes
	// tasks, and no snapshot is ever written.
	NoRecorder bool
	// Trigger decides which requests are slow enough for a snapshot.
	Trigger Trigger
	// MinInterval is the least time between two automatic snapshots.
	MinInterval time.Duration
	// MaxSnapshots and MaxDirBytes bound the snapshots in Dir; the oldest
	// are deleted first (the newest is always kept).
	MaxSnapshots int
	MaxDirBytes  int64
	// FlightMinAge and FlightMaxBytes size the flight recorder's window
	// (runtime/trace.FlightRecorderConfig); MaxBytes wins when both bind.
	FlightMinAge   time.Duration
	FlightMaxBytes uint64
	// SampleInterval is the time between two host samples and CPU counter
	// readings written into the trace while the recorder runs. 100 ms by
	// default: dbwait judges a statement by the samples around it, and a
	// 25 ms network delay is a quarter of that interval already; it costs an
	// idle service about 2 ms of CPU per second more than 250 ms would
	// (docs/agent.md, "Overhead").
	SampleInterval time.Duration
	// ProbeEvery is the period of the CPU-availability probe while the
	// recorder runs or Metrics is set: a goroutine that sleeps this long at a time and logs,
	// under tracelog.Probe, every wake-up later than tracelog.ProbeLate —
	// time the process could not run. dbwait takes a window without late
	// wake-ups as proof the process could run on time. 0 is
	// tracelog.ProbeEvery (20 ms: about 0.25 % of a core on an idle service,
	// docs/agent.md); negative turns the probe off.
	ProbeEvery time.Duration
	// Module is the main module path logged for the analysers
	// (tracelog.Module), which take that module's code to be the
	// application; default from runtime/debug.ReadBuildInfo. A binary built
	// from files (module "command-line-arguments") logs none unless Module
	// is set.
	Module string
	// Instance names this process among the instances of the service; it
	// is logged beside the module (tracelog.Instance), so that analyze can
	// label and compare the snapshots of many instances. Default: the host
	// name (tracelog.DefaultInstance); "-" logs none. Control characters
	// become '?', and it is cut to tracelog.MaxInstanceLen bytes.
	Instance string
	// Route names the task of a request that Handler serves; nil uses the
	// request's ServeMux pattern (see Handler). Return a low-cardinality
	// name: a route, not a path. For chi, gin, echo and gorilla/mux, use
	// the adapter packages instead (agent/agentchi …; docs/agent.md).
	Route func(*http.Request) string
	// MaxRoutes caps the distinct routes the agent keeps apart (task
	// names, metric series, the recorder's per-route windows): once
	// MaxRoutes routes were seen, a request of any other route is counted
	// under OtherRoute. The first time, the agent says so once on standard
	// error, and with Metrics it counts such requests in
	// latscope_routes_over_limit_total. Default 1000.
	MaxRoutes int
	// SpanContext, when set, returns the current span of another tracing
	// system (OpenTelemetry); requests, outbound calls and SQL comments then
	// carry its IDs instead of latscope's own. See docs/agent.md.
	SpanContext SpanContextFunc
	// Listen, when set, serves Endpoints on this address. It must be a
	// loopback address unless Token is set.
	Listen string
	// ListenIdleTimeout, ListenReadTimeout and ListenMaxConns bound the
	// connections of the endpoints' own server (Listen; not a handler you
	// mount yourself): a keep-alive connection idle for ListenIdleTimeout
	// between requests is closed; a request must arrive whole (headers and
	// body) within ListenReadTimeout (on a new connection, from the
	// connection; on a kept-alive one, from its first byte), or the
	// connection is closed; at most ListenMaxConns connections are open at
	// once, and further ones wait in the kernel's accept queue until one
	// closes. Defaults: 30 s, 10 s and 32. There is no write timeout: an
	// on-demand trace may run for MaxTraceSeconds.
	ListenIdleTimeout time.Duration
	ListenReadTimeout time.Duration
	ListenMaxConns    int
	// Token, when set, must come as "Authorization: Bearer TOKEN" with every
	// request to Endpoints.
	Token string
	// ManualInterval and ManualBurst rate-limit the endpoints that copy the
	// flight recorder's window (POST snapshot and GET flight, together): a
	// token bucket of ManualBurst tokens, refilled one per ManualInterval.
	// A request that finds the bucket empty is answered 429 with
	// Retry-After.
	// Agent.Snapshot, called by the service itself, is not limited.
	ManualInterval time.Duration
	ManualBurst    int
	// MaxTraceBytes caps an on-demand trace (GET /debug/latscope/trace):
	// the trace stops as soon as it has written MaxTraceBytes, however many
	// seconds were asked for. See Endpoints.
	MaxTraceBytes int64
	// Metrics, when set, turns the agent's metrics on. It is a Metrics:
	// for Prometheus, agentprom.New(reg) (package
	// github.com/latscope/latscope/agent/agentprom), which New registers on
	// reg (the service's registry, or a prometheus.NewRegistry of its own)
	// and Close unregisters. A prometheus.Registerer itself is taken as
	// agentprom.New of it once package agentprom is imported anywhere in the
	// program; without it, New fails and says so. Per route, Handler records
	// each request's latency, the time its DB calls and outbound calls took
	// (through WrapConnector/WrapDriver, agentpgx and Transport), and each DB
	// call; agentprom reads the host counters (CFS throttling, CPU PSI,
	// steal) at scrape time; and the CPU-availability probe counts stalls,
	// running even with NoRecorder (unless ProbeEvery is negative). nil (the
	// default) leaves metrics off and costs nothing. The names, buckets
	// (MetricBuckets) and queries are in docs/metrics.md.
	Metrics any
	// OnSnapshot, when set, is called after each snapshot attempt with the
	// file written or the error (on the snapshot's own goroutine).
	OnSnapshot func(path string, err error)

	defaultDir bool // Dir was "": the default directory, checked as private
}

// Trigger decides which requests are slow. A fixed Threshold wins; without
// one, a request is slow when it is slower than the Percentile of the last
// Window requests of its route (once Window/10 of them were seen).
type Trigger struct {
	Threshold  time.Duration
	Percentile float64 // in (0, 100)
	Window     int
	// Floor: a request faster than Floor is never slow, whatever the
	// percentile says.
	Floor time.Duration
}

// DefaultOptions are the defaults of every field.
var DefaultOptions = Options{
	Trigger:        Trigger{Percentile: 99, Window: 1000},
	MinInterval:    30 * time.Second,
	MaxSnapshots:   10,
	MaxDirBytes:    256 << 20,
	FlightMinAge:   10 * time.Second,
	FlightMaxBytes: 16 << 20,
	SampleInterval: 100 * time.Millisecond,
	ManualInterval: 10 * time.Second,
	ManualBurst:    3,
	MaxTraceBytes:  64 << 20,
	MaxRoutes:      1000,

	ListenIdleTimeout: 30 * time.Second,
	ListenReadTimeout: 10 * time.Second,
	ListenMaxConns:    32,
}

// DefaultDir returns the default snapshot directory:
// filepath.Join(os.TempDir(), "latscope-<effective uid>"). The uid in the
// name keeps the services of different users apart; the checks of
// Options.Dir keep another user's directory of that name from being used.
func DefaultDir() string {
	return filepath.Join(os.TempDir(), "latscope-"+strconv.Itoa(os.Geteuid()))
}

// withDefaults fills o's zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.Dir == "" {
		o.Dir, o.defaultDir = DefaultDir(), true
	}
	if o.Trigger.Percentile <= 0 || o.Trigger.Percentile >= 100 {
		o.Trigger.Percentile = d.Trigger.Percentile
	}
	o.Trigger.Window = orDefault(o.Trigger.Window, d.Trigger.Window)
	o.MinInterval = orDefault(o.MinInterval, d.MinInterval)
	o.MaxSnapshots = orDefault(o.MaxSnapshots, d.MaxSnapshots)
	o.MaxDirBytes = orDefault(o.MaxDirBytes, d.MaxDirBytes)
	o.FlightMinAge = orDefault(o.FlightMinAge, d.FlightMinAge)
	o.FlightMaxBytes = orDefault(o.FlightMaxBytes, d.FlightMaxBytes)
	o.SampleInterval = orDefault(o.SampleInterval, d.SampleInterval)
	if o.ProbeEvery == 0 {
		o.ProbeEvery = tracelog.ProbeEvery
	}
	o.ManualInterval = orDefault(o.ManualInterval, d.ManualInterval)
	o.ManualBurst = orDefault(o.ManualBurst, d.ManualBurst)
	o.MaxTraceBytes = orDefault(o.MaxTraceBytes, d.MaxTraceBytes)
	o.MaxRoutes = orDefault(o.MaxRoutes, d.MaxRoutes)
	o.ListenIdleTimeout = orDefault(o.ListenIdleTimeout, d.ListenIdleTimeout)
	o.ListenReadTimeout = orDefault(o.ListenReadTimeout, d.ListenReadTimeout)
	o.ListenMaxConns = orDefault(o.ListenMaxConns, d.ListenMaxConns)
	return o
}

// orDefault returns v, or d when v is not positive.
func orDefault[T int | int64 | uint64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}
