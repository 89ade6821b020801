package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/lab"
)

// Job is the Prometheus job of the instances.
const Job = "latscope-fleet"

// triageDelay is how long after a phase ends its triage runs: two scrapes,
// so that Prometheus holds the phase's last samples.
const triageDelay = 2500 * time.Millisecond

// Query is one triage of a phase's window.
type Query struct {
	URL, Job        string
	Start, End      time.Time
	Step, Threshold time.Duration
	Signal          string // "db" or "request"
	Route           string // the route filter ("": every route)
}

// TriageFunc runs triage for q and returns its verdict and the files to
// write beside the report, by suffix (written as PHASE-SIGNAL.SUFFIX). The
// lab uses Triage (triage.Run); tests may pass a fake.
type TriageFunc func(ctx context.Context, q Query) (*VerdictOut, map[string][]byte, error)

// Scenario is the fleet scenario with c and triage tr.
func Scenario(c Config, tr TriageFunc) lab.Scenario {
	return lab.Scenario{
		Name:    "fleet",
		Summary: "three instances, Prometheus, shared PostgreSQL: triage names the faulted instance, shared vs local, period, cause",
		Needs:   []string{"private-postgres", "root"},
		Run:     func(ctx context.Context, env *lab.Env) (*lab.Outcome, error) { return Run(ctx, env, c, tr) },
	}
}

// member is one instance of the fleet.
type member struct {
	name string // A, B, C
	addr string // host:port, Prometheus's instance label
	proc *lab.Process
	cg   *hostsig.Cgroup
}

// runner holds what the phases share.
type runner struct {
	env   *lab.Env
	cfg   Config
	conn  *pgx.Conn // the lab's session: the lock holder
	fleet []*member
	prom  *Prometheus
	tr    TriageFunc
	wg    sync.WaitGroup // triage runs in flight
	// upstream is the URL the instances' RouteQuote calls ("": none), up
	// the lab's upstream behind it (nil in the recording tests, which start
	// their own).
	upstream string
	up       *Upstream
}

// Run starts the fleet, runs the phases with the load on, triages each
// phase's window and checks the verdicts.
func Run(ctx context.Context, env *lab.Env, c Config, tr TriageFunc) (*lab.Outcome, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if _, err := FindPrometheus(""); err != nil {
		return nil, err
	}
	if env.DBURL != "" {
		return nil, errors.New("the fleet scenario starts its own PostgreSQL (it locks a table in it): run it without --db-url")
	}
	began := time.Now()
	env.Logf("starting a private PostgreSQL cluster (initdb into a temporary directory)…")
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Log: env.Detail, Settings: map[string]string{"log_min_duration_statement": "-1"}})
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer cluster.Stop()
	conn, err := pgx.Connect(ctx, cluster.URL())
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(context.Background())
	if err := createTable(ctx, conn); err != nil {
		return nil, err
	}
	r := &runner{env: env, cfg: c, conn: conn, tr: tr}
	if c.needsUpstream() {
		if r.up, err = StartUpstream(ctx, c.UpstreamDelay); err != nil {
			return nil, err
		}
		defer r.up.Close()
		r.upstream = r.up.URL
	}
	defer r.stopFleet()
	if err := r.startFleet(ctx, cluster.URL()); err != nil {
		return nil, err
	}
	addrs := r.addrs()
	env.Logf("starting Prometheus (scrape every 1 s) on %s", strings.Join(addrs, ", "))
	r.prom, err = StartPrometheus(ctx, PromOptions{Job: Job, Targets: addrs, Log: env.Detail})
	if err != nil {
		return nil, err
	}
	defer r.prom.Stop()
	if err := waitUp(ctx, r.prom.URL, len(addrs), 30*time.Second); err != nil {
		return nil, err
	}
	setup := time.Since(began)
	ld := startLoad(ctx, addrs, c, c.Total()+time.Minute)
	env.Logf("load on: %d+%d closed-model clients per instance (think exponential, mean %v); a minute is %v; warm-up %d minutes", c.DBClients, c.NoDBClients, c.Think, c.Minute, c.Warmup)
	lab.Sleep(ctx, c.minutes(float64(c.Warmup)))
	results, err := r.phases(ctx)
	r.wg.Wait()
	lerr := ld.stop()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if lerr != nil {
		return nil, fmt.Errorf("load: %w", lerr)
	}
	for _, p := range results {
		p.Load = ld.stats(addrs, p.Start, p.End)
		p.Checks = check(p, r.names(), c.Minute)
	}
	if c.Hold > 0 {
		env.Logf("Prometheus stays at %s for %v (Ctrl-C ends it); each phase's triage:", r.prom.URL, c.Hold)
		for _, p := range results {
			env.Logf("  %s", triageCommand(p, c))
		}
		lab.Sleep(ctx, c.Hold)
	}
	return r.outcome(results, setup, time.Since(began)), nil
}

// startFleet starts the three instances, each in a cgroup of its own.
func (r *runner) startFleet(ctx context.Context, dbURL string) error {
	for _, name := range []string{"A", "B", "C"} {
		cg, err := hostsig.NewCgroup(lab.CgroupPrefix + "fleet-" + strings.ToLower(name) + "-" + strconv.Itoa(os.Getpid())) // lab.SweepLeftovers removes it if the lab is killed
		if err != nil {
			return fmt.Errorf("instance %s needs its own cgroup (run the lab as root): %w", name, err)
		}
		m := &member{name: name, cg: cg}
		r.fleet = append(r.fleet, m)
		if err := cg.SetWeight(1000); err != nil { // the instances before other work on a busy host; only the quota limits them
			return err
		}
		args := []string{"fleet-serve", "--db-url", dbURL, "--pool", strconv.Itoa(r.cfg.Pool)}
		if r.upstream != "" {
			args = append(args, "--upstream", r.upstream)
		}
		m.proc, err = lab.StartProcess(ctx, r.env, "instance-"+name, args...)
		if err != nil {
			return err
		}
		m.addr = m.proc.Addr
		if err := cg.Add(m.proc.PID); err != nil {
			return err
		}
		r.env.Logf("instance %s: pid %d on %s, cgroup %s", name, m.proc.PID, m.addr, cg.Dir)
	}
	return nil
}

// stopFleet stops the instances and removes their cgroups.
func (r *runner) stopFleet() {
	for _, m := range r.fleet {
		if m.proc != nil {
			if err := m.proc.Stop(); err != nil {
				r.env.Logf("instance %s: %v", m.name, err)
			}
		}
		m.cg.SetQuota(0, 0)
		m.cg.Remove()
	}
}

func (r *runner) addrs() []string {
	out := make([]string, len(r.fleet))
	for i, m := range r.fleet {
		out[i] = m.addr
	}
	return out
}

// names maps Prometheus instance labels to the instances' names.
func (r *runner) names() map[string]string {
	out := map[string]string{}
	for _, m := range r.fleet {
		out[m.addr] = m.name
	}
	return out
}

// phaseSpec is one phase: what it does, for how long, its fault, its
// truth and the signals (and route) triage judges it with.
type phaseSpec struct {
	name, summary string
	minutes       int
	run           func(context.Context, *PhaseResult) error
	truth         func() Truth
	signals       []string
	route         string
	// quoteClients are closed-model clients per instance on RouteQuote for
	// the phase (0: none), the only load on that route. They start a
	// minute before the phase: a counter's first sample has nothing to
	// gain on, so a route whose series begin in the window has no value in
	// its first step and too few good steps for a baseline (the first run
	// of the upstream phase: its outbound calls were never compared, and
	// triage named the hosts).
	quoteClients int
}

// specs are the phases of c, in the order of c.phases().
func (r *runner) specs() []phaseSpec {
	c := r.cfg
	long := c.LongPhaseMinutes()
	all := map[string]phaseSpec{
		PhaseThrottle: {PhaseThrottle, fmt.Sprintf("instance B under a %g CPU quota; %d bursts of CPU work every %d minutes", c.Quota, c.Bursts, c.Period), c.ThrottleMinutes(), r.throttle,
			func() Truth {
				return Truth{Scope: "local", Instance: r.fleet[1].addr, DBPath: "all-requests", Dependency: "host", Period: c.minutes(float64(c.Period)), Cause: "throttled"}
			}, []string{"db"}, "", 0},
		PhaseLock: {PhaseLock, fmt.Sprintf("the shared table locked from minute 2 to minute %d", c.PhaseMinutes-2), c.PhaseMinutes, r.lock,
			func() Truth { return Truth{Scope: "shared", DBPath: "db-only", Dependency: "database"} }, []string{"db"}, "", 0},
		PhaseStop: {PhaseStop, "instance C stopped (SIGSTOP) for a minute from minute 2.25", c.PhaseMinutes, r.stop,
			func() Truth {
				return Truth{Scope: "local", Instance: r.fleet[2].addr, DBPath: "all-requests", Dependency: "host", Cause: "stalled"}
			}, []string{"request"}, "", 0},
		PhaseNone: {PhaseNone, "no fault", c.PhaseMinutes, func(context.Context, *PhaseResult) error { return nil },
			func() Truth { return Truth{Scope: "none"} }, []string{"db", "request"}, "", 0},
		PhaseUpstream: {PhaseUpstream, fmt.Sprintf("%d clients per instance on %s; its upstream (every instance's) %v → %v from minute 2 to minute %d; no DB call on that route",
			c.UpstreamClients, RouteQuote, c.UpstreamDelay, c.SlowUpstream, c.PhaseMinutes-2), c.PhaseMinutes, r.slowUpstream,
			func() Truth {
				return Truth{Scope: "shared", Dependency: "outbound", Route: RouteQuote, Continuous: true}
			}, []string{"request"}, "", c.UpstreamClients},
		PhaseContinuous: {PhaseContinuous, fmt.Sprintf("the shared table locked %v of every %v from minute 2 to minute %d: one fault held throughout, the DB-call p95 hovering at the threshold",
			hoverHold, hoverHold+hoverFree, long-2), long, r.hover,
			func() Truth {
				return Truth{Scope: "shared", DBPath: "db-only", Dependency: "database", Continuous: true}
			}, []string{"db"}, "", 0},
		// The GC-bound instance is local to A, named by the collector's
		// share of its CPU, and found by the peer rule: its DB calls slow
		// far over its peers' but mostly under the threshold. The
		// dependency is judged in triage's words: a local "database" is
		// that instance's DB path — "its pool, connections, network path,
		// or the process making the calls" — and the cause gc says which;
		// its /nodb requests wait 100 ms each, which a GC slowdown of a few
		// milliseconds does not move by half the DB calls' rise (rule 3).
		PhaseGC: {PhaseGC, fmt.Sprintf("instance A allocating in %d goroutines (POST /alloc, a live heap of 2^18 small objects) from minute %d to minute %d; its peers not",
			c.AllocGoroutines, long-8, long-2), long, r.gc,
			func() Truth {
				return Truth{Scope: "local", Instance: r.fleet[0].addr, DBPath: "db-only", Dependency: "database", Cause: "gc", Rule: "peer", Continuous: true}
			}, []string{"db"}, "", 0},
		PhaseThin: {PhaseThin, fmt.Sprintf("%d clients per instance on %s (a few requests per step), triaged alone (--route); its upstream %v → %v from minute 2 to minute %d",
			c.ThinClients, RouteQuote, c.UpstreamDelay, c.SlowUpstream, c.PhaseMinutes-2), c.PhaseMinutes, r.slowUpstream,
			func() Truth {
				return Truth{Scope: "shared", Dependency: "outbound", Route: RouteQuote, Continuous: true, Thin: true}
			}, []string{"request"}, RouteQuote, c.ThinClients},
	}
	var out []phaseSpec
	for _, name := range c.phases() {
		out = append(out, all[name])
	}
	return out
}

// phases runs the phases in order, a gap after each, and starts each
// phase's triage triageDelay after it ends.
func (r *runner) phases(ctx context.Context) ([]*PhaseResult, error) {
	c := r.cfg
	steps := r.specs()
	var out []*PhaseResult
	for i, s := range steps {
		r.env.Step(float64(i)/float64(len(steps)), s.name)
		// Phases start on triage's step grid (it rounds its range to whole
		// steps), so that minute k of a phase is triage's step k.
		start := time.Now().Add(c.Minute - 1).Truncate(c.Minute)
		var quote *load
		if s.quoteClients > 0 {
			q := c
			q.DBClients, q.NoDBClients, q.QuoteClients = 0, 0, s.quoteClients
			quote = startLoad(ctx, r.addrs(), q, c.minutes(float64(s.minutes+2)))
			start = start.Add(c.Minute)
		}
		sleepUntil(ctx, start)
		p := &PhaseResult{Name: s.name, Summary: s.summary, Start: start, Truth: s.truth(), Route: s.route, Prometheus: r.prom.URL}
		p.End = p.Start.Add(c.minutes(float64(s.minutes)))
		r.env.Logf("phase %s (%d minutes, %v): %s", s.name, s.minutes, c.minutes(float64(s.minutes)), s.summary)
		err := s.run(ctx, p)
		sleepUntil(ctx, p.End)
		if quote != nil {
			if lerr := quote.stop(); lerr != nil && err == nil {
				err = fmt.Errorf("load on %s: %w", RouteQuote, lerr)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("phase %s: %w", s.name, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, sig := range s.signals {
			ps := *p
			ps.Signal = sig
			out = append(out, &ps)
			r.triageLater(ctx, &ps)
		}
		if i < len(steps)-1 {
			sleepUntil(ctx, p.End.Add(c.minutes(float64(c.Gap))))
		}
	}
	r.env.Step(1, "report")
	return out, ctx.Err()
}

// triageLater runs triage over p's window triageDelay after its end.
func (r *runner) triageLater(ctx context.Context, p *PhaseResult) {
	q := Query{URL: r.prom.URL, Job: Job, Start: p.Start, End: p.End, Step: r.cfg.Minute, Threshold: r.cfg.Threshold, Signal: p.Signal, Route: p.Route}
	if p.Signal == "request" {
		q.Threshold = r.cfg.RequestThreshold
	}
	r.wg.Go(func() {
		sleepUntil(ctx, p.End.Add(triageDelay))
		ev, err := phaseEvidence(ctx, q.URL, q.Start, q.End)
		if err != nil {
			r.env.Logf("phase %s: %v", p.Name, err)
		}
		p.Prom = ev
		start := time.Now()
		v, files, err := r.tr(ctx, q)
		p.Took = time.Since(start).Round(time.Millisecond).String()
		if err != nil {
			p.Error = err.Error()
			r.env.Logf("triage %s/%s: %v", p.Name, p.Signal, err)
			return
		}
		p.Verdict = v
		r.env.Logf("triage %s/%s: %s", p.Name, p.Signal, v.Line)
		for suffix, b := range files {
			if err := os.WriteFile(filepath.Join(r.env.Out, p.Name+"-"+p.Signal+"."+suffix), b, 0o644); err != nil {
				r.env.Logf("triage %s/%s: %v", p.Name, p.Signal, err)
			}
		}
	})
}

// throttle: instance B under the quota for the whole phase, a burst of
// CPU work at minute 1, 1+Period, ... from a tenth into it, for
// BurstLength.
func (r *runner) throttle(ctx context.Context, p *PhaseResult) error {
	c, m := r.cfg, r.fleet[1]
	if err := m.cg.SetQuota(c.Quota, 0); err != nil {
		return err
	}
	defer m.cg.SetQuota(0, 0)
	for k := range c.Bursts {
		sleepUntil(ctx, p.Start.Add(c.minutes(float64(1+k*c.Period)+0.1)))
		before, from := throttledPeriods(m.cg), time.Now()
		d := c.BurstLength()
		if err := postBurst(ctx, m.addr, d, c.BurstGoroutines); err != nil {
			return err
		}
		sleepUntil(ctx, from.Add(d))
		p.Faults = append(p.Faults, Fault{What: fmt.Sprintf("burst of %d goroutines under %g CPU", c.BurstGoroutines, c.Quota), Instance: m.addr,
			From: from, To: time.Now(), Throttled: throttledPeriods(m.cg) - before})
	}
	return nil
}

// lock: the shared table locked from minute 2 to two minutes before the
// phase's end, lockHold of every lockHold+lockFree.
func (r *runner) lock(ctx context.Context, p *PhaseResult) error {
	c := r.cfg
	sleepUntil(ctx, p.Start.Add(c.minutes(2)))
	from, to, err := lockUntil(ctx, r.conn, p.End.Add(-c.minutes(2)))
	if !from.IsZero() {
		p.Faults = append(p.Faults, Fault{What: fmt.Sprintf("table lock held %v of every %v", lockHold, lockHold+lockFree), From: from, To: to})
	}
	return err
}

// stop: instance C stopped for one minute from 2.25 minutes in.
func (r *runner) stop(ctx context.Context, p *PhaseResult) error {
	c, m := r.cfg, r.fleet[2]
	sleepUntil(ctx, p.Start.Add(c.minutes(2.25)))
	from, to, err := stopFor(ctx, m.proc.PID, c.Minute)
	if !from.IsZero() {
		p.Faults = append(p.Faults, Fault{What: "SIGSTOP", Instance: m.addr, From: from, To: to})
	}
	return err
}

// Lock timing of the continuous phase: the table locked 60 ms of every
// 500 ms, so that about 6 % of the DB calls wait over 30 ms and the DB-call
// p95 hovers around the lab's threshold (TestRecordCases's hover case).
const (
	hoverHold = 60 * time.Millisecond
	hoverFree = 440 * time.Millisecond
)

// hover: the shared table locked hoverHold of every hoverHold+hoverFree
// from minute 2 to two minutes before the phase's end.
func (r *runner) hover(ctx context.Context, p *PhaseResult) error {
	c := r.cfg
	sleepUntil(ctx, p.Start.Add(c.minutes(2)))
	from := time.Now()
	err := lockCycle(ctx, r.conn, hoverHold, hoverFree, p.End.Add(-c.minutes(2)))
	p.Faults = append(p.Faults, Fault{What: fmt.Sprintf("table lock held %v of every %v", hoverHold, hoverHold+hoverFree), From: from, To: time.Now()})
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	return nil
}

// slowUpstream: the upstream, shared by every instance, answers in
// SlowUpstream instead of UpstreamDelay from minute 2 to two minutes
// before the phase's end (the phase's clients on RouteQuote run
// throughout).
func (r *runner) slowUpstream(ctx context.Context, p *PhaseResult) error {
	c := r.cfg
	sleepUntil(ctx, p.Start.Add(c.minutes(2)))
	r.up.SetDelay(c.SlowUpstream)
	from := time.Now()
	sleepUntil(ctx, p.End.Add(-c.minutes(2)))
	r.up.SetDelay(c.UpstreamDelay)
	p.Faults = append(p.Faults, Fault{What: fmt.Sprintf("answering in %v instead of %v", c.SlowUpstream, c.UpstreamDelay), On: "the upstream of " + RouteQuote + " (every instance's)",
		From: from, To: time.Now()})
	return ctx.Err()
}

// gc: instance A allocating (POST /alloc, AllocGoroutines goroutines)
// from 8 minutes before the phase's end to 2 minutes before it; the quiet
// minutes before give the collector's share its baseline.
func (r *runner) gc(ctx context.Context, p *PhaseResult) error {
	c, m := r.cfg, r.fleet[0]
	sleepUntil(ctx, p.End.Add(-c.minutes(8)))
	from, end := time.Now(), p.End.Add(-c.minutes(2))
	for now := from; now.Before(end) && ctx.Err() == nil; now = time.Now() {
		d := min(end.Sub(now), time.Minute) // POST /alloc takes at most a minute
		if err := postAlloc(ctx, m.addr, d, c.AllocGoroutines); err != nil {
			return err
		}
		sleepUntil(ctx, now.Add(d))
	}
	p.Faults = append(p.Faults, Fault{What: fmt.Sprintf("allocation loop in %d goroutines", c.AllocGoroutines), Instance: m.addr, From: from, To: time.Now()})
	return ctx.Err()
}
