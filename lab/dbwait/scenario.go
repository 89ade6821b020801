package dbwait

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/units"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/internal/report/dbwaitreport"
	"github.com/latscope/latscope/lab"
)

func init() {
	lab.Register(lab.Scenario{
		Name:    "dbwait",
		Summary: "time inside vs outside the DB — table lock, SIGSTOP, CFS quota, CPU without a limit, 30 ms proxy",
		Needs:   []string{"private-postgres", "root"},
		Run:     Run,
	})
}

// MinFaultWindow is the shortest window of a condition with a fault: the
// fault starts at FaultAt and the pause ends PauseHold after that.
const MinFaultWindow = 4 * time.Second

// settle is how long the service runs in its cgroup before the window.
const settle = time.Second

// Run runs every condition env.Profile.Runs times and checks the verdicts.
func Run(ctx context.Context, env *lab.Env) (*lab.Outcome, error) {
	return runScenario(ctx, env, Conditions, OwnCPU, outcome)
}

// CPU weights of the service's cgroup (cgroup v2 cpu.weight; hostsig
// converts for v1). OwnCPU: only the quota limits the service, however
// busy the machine — the dbwait scenario's conditions each test one
// cause. SharedCPU: the default, the weight every process on the host
// has — the fault suite's, whose loaded host must compete with it.
const (
	OwnCPU    = 10000
	SharedCPU = 100
)

// runScenario runs conds on a private cluster, the service's cgroup at
// CPU weight weight, and builds the outcome with report.
func runScenario(ctx context.Context, env *lab.Env, conds []Condition, weight int, report func(*lab.Env, []*ConditionResult) (*lab.Outcome, error)) (*lab.Outcome, error) {
	if env.DBURL != "" {
		return nil, opterr.Wrap("db-url", errors.New("cannot serve this scenario: dbwait reads the server's own jsonlog, so it needs a private cluster the lab starts itself"))
	}
	env.Logf("starting a private PostgreSQL cluster (initdb into a temporary directory)…")
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Log: env.Detail})
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer cluster.Stop()
	logFile, err := cluster.LogFile()
	if err != nil {
		return nil, err
	}
	conn, err := setup(ctx, cluster.URL())
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	cg, err := hostsig.NewCgroup(lab.CgroupPrefix + "dbwait-" + strconv.Itoa(os.Getpid())) // lab.SweepLeftovers removes it if the lab is killed
	if err != nil {
		return nil, fmt.Errorf("the CFS quota condition needs its own cgroup (run the lab as root): %w", err)
	}
	defer cg.Remove()
	if err := cg.SetWeight(weight); err != nil {
		return nil, err
	}
	pgcg, err := dbCgroup(cluster)
	if err != nil {
		return nil, err
	}
	defer pgcg.Remove()
	r := &runner{env: env, cluster: cluster, logFile: logFile, conn: conn, cg: cg, elsewhere: pgcg}
	results, err := r.all(ctx, conds)
	if err != nil {
		return nil, err
	}
	env.Step(1, "report")
	return report(env, results)
}

// dbCgroup moves the cluster's postmaster, and so every backend it forks
// from now on, into a cgroup of its own at the default CPU weight
// (SharedCPU), where the delaying proxy runs too. The cgroup is there for
// the db-quota condition's CFS quota, not for priority: the database and
// the proxy share the host's cores with the service and, when loaded, the
// burners, as a database and a proxy on a busy host of their own would
// (issue 34 item 5: until then the cgroup had the highest weight, which
// the burners could not take CPU from, and the suite scored better than an
// independent service). (The cluster's processes forked before — the
// lab's own session among them — stay where they were.)
func dbCgroup(cluster *pgcluster.Cluster) (*hostsig.Cgroup, error) {
	pid, err := cluster.PID()
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cg, err := hostsig.NewCgroup(lab.CgroupPrefix + "dbwait-pg-" + strconv.Itoa(os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("the database's cgroup: %w", err)
	}
	if err := errors.Join(cg.SetWeight(SharedCPU), cg.Add(pid)); err != nil {
		cg.Remove()
		return nil, fmt.Errorf("the database's cgroup: %w", err)
	}
	return cg, nil
}

// all runs every condition env.Profile.Runs times.
func (r *runner) all(ctx context.Context, conds []Condition) ([]*ConditionResult, error) {
	var results []*ConditionResult
	runs := r.env.Profile.Runs
	total := len(conds) * runs
	for i, c := range conds {
		cr := &ConditionResult{Name: c.Name, Summary: c.Summary, cond: c}
		for n := 1; n <= runs; n++ {
			r.env.Step(float64(i*runs+n-1)/float64(total), fmt.Sprintf("%s run %d/%d", c.Name, n, runs))
			rr, err := r.run(ctx, c, n)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", c.Name, n, err)
			}
			cr.Runs = append(cr.Runs, rr)
		}
		cr.aggregate()
		results = append(results, cr)
	}
	return results, nil
}

// setup connects the lab's own session and creates Table.
func setup(ctx context.Context, url string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	_, err = conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id int PRIMARY KEY, val text NOT NULL);
		INSERT INTO %[1]s SELECT g, md5(g::text) FROM generate_series(1, %d) g; ANALYZE %[1]s`, Table, Rows))
	if err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("postgres: create %s: %w", Table, err)
	}
	return conn, nil
}

// runner holds what every run shares.
type runner struct {
	env     *lab.Env
	cluster *pgcluster.Cluster
	logFile string
	conn    *pgx.Conn       // the lab's session: lock holder and log marker
	cg      *hostsig.Cgroup // the service's
	// elsewhere is the database's and the proxy's cgroup (dbCgroup), at
	// the default weight.
	elsewhere *hostsig.Cgroup
	logOff    int // where the previous run's part of the server log ended
}

// run measures one condition once: service, cgroup, window with its fault,
// analysis.
func (r *runner) run(ctx context.Context, c Condition, n int) (*RunResult, error) {
	name := fmt.Sprintf("%s-%d", c.Name, n)
	dbURL := r.cluster.URL()
	var proxyOn time.Time
	var px *lab.Process
	if c.Delay > 0 {
		proxyOn = time.Now()
		var err error
		if px, err = r.proxy(ctx, name, c.Delay); err != nil {
			return nil, err
		}
		defer px.Stop()
		dbURL = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", px.Addr)
	}
	p, err := lab.StartProcess(ctx, r.env, "svc-"+name, "dbwait-serve", "--db-url", dbURL,
		"--cpu-work", c.CPUWork.String(), "--cpu-fanout", strconv.Itoa(HeavyFanout))
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	quotaOn := time.Now()
	if err := r.cg.SetQuota(c.Quota, 0); err != nil {
		return nil, err
	}
	if err := r.cg.Add(p.PID); err != nil {
		return nil, err
	}
	var dbOn time.Time
	stopDB := func() error { return nil }
	if c.DBQuota > 0 {
		dbOn = time.Now()
		stop, err := r.dbQuota(ctx, c.DBQuota)
		if err != nil {
			return nil, err
		}
		stopDB = stop
		defer stop()
	}
	lab.Sleep(ctx, settle)
	rr, err := r.window(ctx, c, name, p)
	if err != nil {
		return nil, err
	}
	if c.Quota > 0 { // the quota and the proxy stay on to the end of the window
		rr.addFault(fmt.Sprintf("CFS quota %g CPU", c.Quota), quotaOn, time.Now())
	}
	if c.Delay > 0 {
		rr.addFault(fmt.Sprintf("proxy +%v", c.Delay), proxyOn, time.Now())
	}
	if c.DBQuota > 0 {
		rr.addFault(fmt.Sprintf("database CFS quota %g CPU", c.DBQuota), dbOn, time.Now())
	}
	if err := p.Stop(); err != nil {
		return nil, err
	}
	if px != nil { // after the service, so that it loses no connection; stopping writes out the proxy's log
		if err := px.Stop(); err != nil {
			return nil, err
		}
		rr.ProxyLog = name + ".proxy.log"
	}
	if err := r.cg.SetQuota(0, 0); err != nil {
		return nil, err
	}
	if err := stopDB(); err != nil {
		return nil, err
	}
	return rr, r.analyse(ctx, rr)
}

// dbQuota sets the database cgroup's CFS quota to cpus and starts a
// backend spinning in it (a PL/pgSQL loop on a connection of its own);
// stop cancels the loop and lifts the quota, once however often called.
func (r *runner) dbQuota(ctx context.Context, cpus float64) (stop func() error, err error) {
	conn, err := pgx.Connect(ctx, r.cluster.URL())
	if err != nil {
		return nil, fmt.Errorf("database quota: spinning session: %w", err)
	}
	if err := r.elsewhere.SetQuota(cpus, 0); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	spinCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn.Exec(spinCtx, "DO $$ BEGIN LOOP PERFORM 1; END LOOP; END $$") // until canceled
	}()
	return sync.OnceValue(func() error {
		cancel()
		<-done
		conn.Close(context.Background())
		return r.elsewhere.SetQuota(0, 0)
	}), nil
}

// proxy starts `latscope-lab proxy` delaying the database's answers by delay,
// as a process of its own in the database's cgroup, at the default weight:
// on a busy host its timers may fire late and lengthen the delay, as a
// loaded network hop's would. It logs every chunk on its own clock to
// <name>.proxy.log (--log), written out when it stops: the truth of the
// network's share of each statement (delayTruth).
func (r *runner) proxy(ctx context.Context, name string, delay time.Duration) (*lab.Process, error) {
	px, err := lab.StartProcess(ctx, r.env, "proxy-"+name, "proxy", "--to", fmt.Sprintf("127.0.0.1:%d", r.cluster.Port()), "--delay", delay.String(),
		"--log", filepath.Join(r.env.Out, name+".proxy.log"))
	if err != nil {
		return nil, err
	}
	if err := r.elsewhere.Add(px.PID); err != nil {
		px.Stop()
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return px, nil
}

// window captures the trace while the condition's fault runs.
func (r *runner) window(ctx context.Context, c Condition, name string, p *lab.Process) (*RunResult, error) {
	secs := int(max(r.env.Profile.Window, c.MinWindow) / time.Second)
	if c.Fault != NoFault {
		secs = max(secs, int(MinFaultWindow/time.Second), int((c.faultEnd()+2*time.Second-1)/time.Second)) // a second after the last fault
	}
	r.env.Logf("%s: %s; tracing %d s", name, c.Summary, secs)
	type captured struct {
		w   *lab.Window
		err error
	}
	done := make(chan captured, 1)
	go func() {
		w, err := lab.CaptureWindow(ctx, p, secs, r.env.Out, name)
		done <- captured{w, err}
	}()
	rr := &RunResult{Run: name}
	stopRec, err := r.recordDBHost(ctx, name, rr)
	if err != nil {
		return nil, err
	}
	var ferr error
	if c.Fault != NoFault {
		lab.Sleep(ctx, FaultAt)
		switch c.Fault {
		case LockFault:
			from := time.Now() // BEGIN and LOCK TABLE take well under a ms on the idle lab session
			ferr = holdLock(ctx, r.conn, LockHold)
			rr.addFault("table lock held", from, time.Now())
		case StopFault:
			ferr = r.stops(ctx, c, p.PID, rr)
		case PauseFault:
			var m PauseMarks
			m, ferr = pauseWhileLocked(ctx, r.conn, p.PID, LockHold, PauseHold)
			rr.PausedMs = units.Ms(m.Continued.Sub(m.Stopped))
			if !m.Unlocked.IsZero() && !m.Continued.IsZero() {
				rr.addFault("table lock held", m.Locked, m.Unlocked)
				rr.addFault(fmt.Sprintf("SIGSTOP %.2f s", rr.PausedMs/1000), m.Stopped, m.Continued)
			}
		}
	}
	cw := <-done
	if err := errors.Join(cw.err, ferr, stopRec()); err != nil {
		return nil, err
	}
	rr.Trace, rr.CPUMs, rr.WindowMs = relTo(r.env.Out, cw.w.Trace), units.Ms(cw.w.CPU), units.Ms(cw.w.End.Sub(cw.w.Start))
	rr.trace = cw.w.Trace
	return rr, nil
}

// recordDBHost records the database backends' run-queue waits (package
// dbhost) into <run>.dbhost.txt beside the trace, from now until the
// function it returns is called, as `latscope dbhost` would on the
// database's host; `latscope dbwait --dbhost` reads the file.
func (r *runner) recordDBHost(ctx context.Context, name string, rr *RunResult) (stop func() error, err error) {
	pid, err := r.cluster.PID()
	if err != nil {
		return nil, fmt.Errorf("dbhost recording: %w", err)
	}
	rr.DBHost = name + ".dbhost.txt"
	f, err := os.Create(filepath.Join(r.env.Out, rr.DBHost))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- dbhost.Recorder{Parent: pid}.Run(ctx, f) }()
	return func() error {
		cancel()
		return errors.Join(<-done, f.Close())
	}, nil
}

// relTo names file relative to dir when it lies inside it.
func relTo(dir, file string) string {
	if rel, err := filepath.Rel(dir, file); err == nil {
		return rel
	}
	return file
}

// analyse joins the run's trace with its part of the server log, and
// writes that part beside the trace (<run>.postgresql.json) so that
// `latscope dbwait` can re-derive every number. It joins them twice (judge):
// with the database host's recording, as `latscope dbwait --dbhost` would,
// and without it (rr.resNoDBHost), as most users run it; the fault suite
// scores both. The fault spans are placed on the trace's clock here, from
// this process's clock: the one step of the analysis a kept run (keep.go)
// does not repeat, since it keeps the spans as placed.
func (r *runner) analyse(ctx context.Context, rr *RunResult) error {
	pg, err := r.flushedLog(ctx, rr.Run)
	if err != nil {
		return err
	}
	rr.PGLog = rr.Run + ".postgresql.json"
	if err := os.WriteFile(filepath.Join(r.env.Out, rr.PGLog), pg, 0o644); err != nil {
		return err
	}
	dbh, err := readDBHost(filepath.Join(r.env.Out, rr.DBHost))
	if err != nil {
		return err
	}
	trace, err := os.ReadFile(rr.trace)
	if err != nil {
		return err
	}
	j, err := judge(rr.trace, trace, r.logFile, pg, dbh, dbwait.Options{})
	if err != nil {
		return err
	}
	rr.placeFaults(j.res.TraceStart)
	rr.take(j)
	if err := rr.truthFiles(filepath.Join(r.env.Out, rr.ProxyLog), dbh); err != nil {
		return err
	}
	if err := writeText(filepath.Join(r.env.Out, rr.Run+".dbwait.txt"), j.res); err != nil {
		return err
	}
	return writeText(filepath.Join(r.env.Out, rr.Run+".nodbhost.dbwait.txt"), j.bare)
}

// judged is one run's trace and log joined with the database host's
// recording (res) and without it (bare), and the trace's host samples.
type judged struct {
	res, bare *dbwait.Result
	samples   []hostsig.Sample
}

// judge joins a run's trace with pg, its part of the server log, twice:
// with dbh, the database host's recording, and without it. The names are
// for errors. The live suite and the kept runs (keep.go) both judge a run
// this way.
func judge(traceName string, trace []byte, pgName string, pg []byte, dbh *dbhost.Waits, opts dbwait.Options) (judged, error) {
	res, samples, err := joinCapture(traceName, bytes.NewReader(trace), pgName, bytes.NewReader(pg), dbh, opts)
	if err != nil {
		return judged{}, err
	}
	bare, _, err := joinCapture(traceName, bytes.NewReader(trace), pgName, bytes.NewReader(pg), nil, opts)
	if err != nil {
		return judged{}, fmt.Errorf("without the database host's recording: %w", err)
	}
	return judged{res: res, bare: bare, samples: samples}, nil
}

// take fills rr from j.
func (rr *RunResult) take(j judged) {
	rr.fill(j.res, j.samples)
	rr.resNoDBHost, rr.VerdictsNoDBHost = j.bare, verdictCounts(j.bare.Summary)
}

// writeText writes dbwait's text report of res to name.
func writeText(name string, res *dbwait.Result) error {
	var text bytes.Buffer
	dbwaitreport.WriteText(&text, res, dbwaitreport.TextOptions{})
	return os.WriteFile(name, text.Bytes(), 0o644)
}

// flushedLog returns the server log since the previous run, once it holds
// everything up to now: it logs a marker statement and waits for the
// collector to write it.
func (r *runner) flushedLog(ctx context.Context, name string) ([]byte, error) {
	marker := "latscope dbwait end of " + name
	if _, err := r.conn.Exec(ctx, "SELECT '"+marker+"'"); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(r.logFile)
		if err != nil {
			return nil, err
		}
		if i := bytes.Index(b[min(r.logOff, len(b)):], []byte(marker)); i >= 0 {
			i += r.logOff
			if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
				part := b[r.logOff : i+j+1]
				r.logOff = i + j + 1
				return part, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: the marker %q was not logged within 10 s", r.logFile, marker)
		}
		lab.Sleep(ctx, 20*time.Millisecond)
	}
}
