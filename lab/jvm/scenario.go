// Package jvm is the lab scenario `latscope-lab jvm` (docs/lab-jvm.md): the
// seed experiment (docs/method.md §10) on the JVM, end to end. A JDK service
// (com.sun.net.httpserver, instrumented with the repository's Java library
// io.latscope) with one endpoint — CPU work, an upstream HTTP call to a JDK
// upstream that answers after a configured delay, a PostgreSQL query through
// pgjdbc behind a semaphore pool, CPU work under a shared monitor — runs in
// three modes (serial, concurrent, fixed) under closed-model load from
// package loadgen; each mode is recorded with JFR after warm-up and
// analysed with package jvm, and the seed's checks are made against the
// configuration. A second path fans each request out into tiny ForkJoinPool
// tasks; the fix (batching) is measured. A third, /lock, holds a CPU-bound
// lock: recorded at a few clients, its throughput at a saturating
// concurrency is predicted by latscope's engine and then measured.
package jvm

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/latscope/latscope/internal/httpurl"
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/lab"
)

func init() {
	lab.Register(lab.Scenario{
		Name:    "jvm",
		Summary: "the seed experiment on the JVM: a JDK service with the io.latscope library, pgjdbc, JFR; serial/concurrent/fixed checked against the configuration; a ForkJoinPool burst and its fix",
		Needs:   []string{"postgres"},
		Check:   CheckTools,
		Run:     Run,
	})
}

// Config is the scenario's ground truth: what the service and its
// dependencies are configured to do. The checks compare against it, never
// against latscope's own output.
type Config struct {
	UpstreamDelay time.Duration // the upstream answers after this
	DBDelay       time.Duration // pg_sleep of the query
	Pool          int           // JDBC connections behind the semaphore
	CPU, Shared   time.Duration // CPU work before, and under the shared monitor
	// The burst path: BurstTasks items of BurstTaskCPU each on a
	// ForkJoinPool of BurstParallelism, one task per item ("fan-out") or
	// BurstBatch items per task ("batched", the fix), under BurstClients
	// closed-model clients that think BurstThink between requests.
	BurstTasks, BurstBatch, BurstParallelism, BurstClients int
	BurstTaskCPU, BurstThink                               time.Duration
	// The saturation run (/lock): LockPre of CPU, an upstream call that
	// asks for LockUpstream, then LockCPU of CPU holding a monitor (a lock
	// of one, the bottleneck); recorded at LockClients, predicted and
	// measured at SatClients.
	LockPre, LockCPU, LockUpstream time.Duration
	LockClients, SatClients        int
	// Heap is the service JVM's -Xms/-Xmx.
	Heap string
}

// DefaultConfig is the seed's configuration (docs/method.md §10).
var DefaultConfig = Config{
	UpstreamDelay: 100 * time.Millisecond, DBDelay: 50 * time.Millisecond, Pool: 10,
	CPU: time.Millisecond, Shared: 2 * time.Millisecond,
	BurstTasks: 1024, BurstBatch: 1024, BurstParallelism: 32, BurstClients: 4,
	BurstTaskCPU: 250 * time.Nanosecond, BurstThink: 10 * time.Millisecond,
	LockPre: 500 * time.Microsecond, LockCPU: 1500 * time.Microsecond, LockUpstream: 10 * time.Millisecond,
	LockClients: 4, SatClients: 32,
	Heap: "256m",
}

// Modes are the seed's modes, in the order they run; serial is the one the
// predictions are made from.
var Modes = []string{"serial", "concurrent", "fixed"}

// BurstVariants are the burst path's two runs: fan-out, then the fix.
var BurstVariants = []string{"fan-out", "batched"}

// Handler and BurstHandler are the service's handler methods, as
// `latscope analyze --handler` takes them.
const (
	Handler      = "JvmService.handle"
	BurstHandler = "JvmService.burst"
)

// serverThreads are the service's HTTP worker threads: more than the
// saturation path's clients, so that no request queues outside its task.
const serverThreads = 64

// jvmWarmup is the shortest warm-up a JVM window gets: the JIT compiles the
// hot paths in the first seconds, whatever the profile says.
const jvmWarmup = 5 * time.Second

// minWindow is the shortest recorded window: JFR has no request boundaries,
// so the requests cut by the window's edges are an error of about half the
// cut over the counted (docs/jfr.md); 5 s keeps it near 1.5 % with 20
// clients, where the Go lab's 3 s windows would make it 3 %.
const minWindow = 5 * time.Second

// The burst path's windows: its requests are short, so a few seconds hold
// thousands of them (and, at 1 ms samples, a few hundred execution
// samples: the churn rule wants 50), and its one loop is compiled within
// the shorter warm-up.
const (
	minBurstWindow = 3 * time.Second
	maxBurstWindow = 10 * time.Second
	burstWarmup    = 3 * time.Second
)

// jvmFlags are the service JVM's flags besides the heap: the serial
// collector and the C1 compiler only (-XX:TieredStopAtLevel=1) keep GC and
// JIT threads from competing with the service for the lab's two cores, and
// the JIT reaches its steady state within the warm-up; -Xlog:gc puts every
// collection in the service's log.
var jvmFlags = []string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xlog:gc"}

// Run runs the scenario.
func Run(ctx context.Context, env *lab.Env) (*lab.Outcome, error) {
	return RunConfig(ctx, env, DefaultConfig)
}

// RunConfig runs the scenario with cfg.
func RunConfig(ctx context.Context, env *lab.Env, cfg Config) (*lab.Outcome, error) {
	loadBefore := lab.LoadAverage()
	t, err := findTools("")
	if err != nil {
		return nil, err
	}
	env.Step(0, "build")
	env.Logf("building the io.latscope library and the service (javac)…")
	if err := build(ctx, t, filepath.Join(env.Out, "java")); err != nil {
		return nil, err
	}
	jdbcURL, stopDB, err := database(ctx, env)
	if err != nil {
		return nil, err
	}
	defer stopDB()
	up, err := startJVM(ctx, t, env.Out, "upstream", append([]string{"-Xms128m", "-Xmx128m"}, jvmFlags...),
		[]string{"upstream", "--delay-ms", strconv.FormatInt(cfg.UpstreamDelay.Milliseconds(), 10)})
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	defer up.stop()
	env.Logf("JDK upstream on %s (answers after %s)", up.url(), cfg.UpstreamDelay)
	r := &runner{env: env, cfg: cfg, tools: t, upstream: up.url() + "/", jdbc: jdbcURL}
	total := float64(len(Modes) + len(BurstVariants) + 1)
	var runs []*ModeRun
	for i, mode := range Modes {
		env.Step(float64(i)/total, mode)
		mr, err := r.mode(ctx, mode)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		runs = append(runs, mr)
	}
	var bursts []*BurstRun
	for i, v := range BurstVariants {
		env.Step(float64(len(Modes)+i)/total, "burst "+v)
		br, err := r.burst(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("burst %s: %w", v, err)
		}
		bursts = append(bursts, br)
	}
	env.Step(float64(len(Modes)+len(BurstVariants))/total, "saturate")
	sat, err := r.saturate(ctx)
	if err != nil {
		return nil, fmt.Errorf("saturate: %w", err)
	}
	env.Step(1, "report")
	return outcome(env, cfg, runs, bursts, sat, loadBefore)
}

// database returns the JDBC URL of the PostgreSQL to use: env.DBURL, or a
// private cluster (run as the postgres user when the lab is root).
func database(ctx context.Context, env *lab.Env) (string, func(), error) {
	if env.DBURL != "" {
		u, err := JDBCURL(env.DBURL)
		return u, func() {}, err
	}
	env.Logf("starting a private PostgreSQL cluster (initdb into a temporary directory)…")
	c, err := pgcluster.Start(ctx, pgcluster.Options{Log: env.Detail})
	if err != nil {
		return "", nil, fmt.Errorf("postgres: %w", err)
	}
	u, err := JDBCURL(c.URL())
	if err != nil {
		c.Stop()
		return "", nil, err
	}
	return u, func() { c.Stop() }, nil
}

// JDBCURL turns a postgres:// URL into pgjdbc's jdbc:postgresql:// form,
// user and password as parameters.
func JDBCURL(pg string) (string, error) {
	u, err := url.Parse(pg)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", fmt.Errorf("--db-url: want postgres://user@host:port/db, got %q", httpurl.Redact(pg))
	}
	q := url.Values{}
	for k, v := range u.Query() {
		q[k] = v
	}
	if u.User != nil {
		q.Set("user", u.User.Username())
		if p, ok := u.User.Password(); ok {
			q.Set("password", p)
		}
	}
	db := u.Path
	if db == "" || db == "/" {
		db = "/postgres"
	}
	return "jdbc:postgresql://" + u.Host + db + "?" + q.Encode(), nil
}

// runner holds what every run shares.
type runner struct {
	env        *lab.Env
	cfg        Config
	tools      *tools
	upstream   string
	jdbc       string
	itersPerMs int // the first service's calibration, reused by the rest
}

var itersRE = regexp.MustCompile(`iters_per_ms=(\d+)`)

// service starts the service JVM with args.
func (r *runner) service(ctx context.Context, name string, args ...string) (*process, error) {
	c := r.cfg
	all := []string{"serve", "--upstream", r.upstream, "--jdbc", r.jdbc,
		"--db-delay-ms", strconv.FormatInt(c.DBDelay.Milliseconds(), 10), "--pool", strconv.Itoa(c.Pool),
		"--cpu-us", strconv.FormatInt(c.CPU.Microseconds(), 10), "--shared-us", strconv.FormatInt(c.Shared.Microseconds(), 10),
		"--burst-tasks", strconv.Itoa(c.BurstTasks), "--burst-parallelism", strconv.Itoa(c.BurstParallelism),
		"--burst-task-ns", strconv.FormatInt(c.BurstTaskCPU.Nanoseconds(), 10),
		"--lock-pre-us", strconv.FormatInt(c.LockPre.Microseconds(), 10), "--lock-us", strconv.FormatInt(c.LockCPU.Microseconds(), 10),
		"--lock-upstream-ms", strconv.FormatInt(c.LockUpstream.Milliseconds(), 10),
		"--iters-per-ms", strconv.Itoa(r.itersPerMs), "--threads", strconv.Itoa(serverThreads)}
	jvmArgs := append([]string{"-Xms" + c.Heap, "-Xmx" + c.Heap}, jvmFlags...)
	p, err := startJVM(ctx, r.tools, r.env.Out, name, jvmArgs, append(all, args...))
	if err != nil {
		return nil, err
	}
	if m := itersRE.FindStringSubmatch(p.out.String()); m != nil && r.itersPerMs == 0 {
		r.itersPerMs, _ = strconv.Atoi(m[1])
	}
	return p, nil
}

// window is one recorded window of a service.
type window struct {
	Recording string        // the .jfr file
	Results   string        // the load's results (JSON lines) of the whole run
	CPU       time.Duration // the process's utime+stime over the window
	Own       ownStats      // the service's own timings over the same window
	Start     time.Time
	End       time.Time
	Load      *loadgen.Report
	RecStart  time.Time // the recording's start, from its chunk header
}

// measure drives the service at path with closed-model load and records a
// JFR window after warm-up: JFR.start with internal/jfr/latscope.jfc on top of
// profile, then the process CPU counter and the service's own timings at
// both ends, then JFR.stop.
func (r *runner) measure(ctx context.Context, p *process, name, path string, clients int, think, warm, length time.Duration, settings ...string) (*window, error) {
	return r.drive(ctx, p, name, path, clients, think, warm, length, true, settings...)
}

// drive is measure, with a JFR recording of the window when record is set;
// without one the window's Recording is "".
func (r *runner) drive(ctx context.Context, p *process, name, path string, clients int, think, warm, length time.Duration, record bool, settings ...string) (*window, error) {
	prof := r.env.Profile
	prof.Window = length
	dir := filepath.Join(r.env.Out, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &window{Results: filepath.Join(dir, "results.jsonl")}
	if record {
		w.Recording = filepath.Join(dir, "recording.jfr")
	}
	f, err := os.Create(w.Results)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	enc := loadgen.NewJSONEncoder(f)
	opts := loadgen.DefaultOptions
	// The load runs a second past the window, so the recording lies inside
	// its measured part.
	opts.URL, opts.Clients, opts.Warmup, opts.Duration, opts.Think = p.url()+path, clients, warm, prof.Window+time.Second, think
	rep := &loadgen.Report{}
	var encErr error
	loadDone, finished := make(chan error, 1), make(chan struct{})
	lctx, cancel := context.WithCancel(ctx)
	// On an early return the load is stopped and waited for before its
	// results file is closed.
	defer func() { cancel(); <-finished }()
	go func() {
		defer close(finished)
		loadDone <- loadgen.Run(lctx, opts, func(res loadgen.Result) {
			if err := enc.Encode(&res); err != nil && encErr == nil {
				encErr = err
			}
			rep.Add(&res)
		})
	}()
	select {
	case <-time.After(warm):
	case err := <-loadDone:
		return nil, fmt.Errorf("load ended during warm-up: %v", err)
	}
	if record {
		r.env.Logf("%s: warm-up done, recording %s with JFR…", name, prof.Window)
		start := []string{"JFR.start", "name=latscope-lab", "settings=profile", "settings=" + r.tools.jfc}
		for _, s := range settings {
			start = append(start, "settings="+s)
		}
		if err := jcmd(ctx, r.tools, p.pid(), start...); err != nil {
			return nil, err
		}
	} else {
		r.env.Logf("%s: warm-up done, measuring %s (no recording)…", name, prof.Window)
	}
	cpu0, err := lab.ProcessCPU(p.pid())
	if err != nil {
		return nil, err
	}
	own0, err := getStats(ctx, p.url())
	if err != nil {
		return nil, err
	}
	w.Start = time.Now()
	lab.Sleep(ctx, prof.Window)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cpu1, err := lab.ProcessCPU(p.pid())
	if err != nil {
		return nil, err
	}
	own1, err := getStats(ctx, p.url())
	if err != nil {
		return nil, err
	}
	w.End = time.Now()
	if served := own1.Requests + own1.BurstRequests + own1.LockRequests - own0.Requests - own0.BurstRequests - own0.LockRequests; served < int64(clients) {
		// Hardly a request in a whole window: the service is stuck. Its
		// threads say where.
		dump := filepath.Join(dir, "threads.txt")
		if out, err := jcmdOutput(ctx, r.tools, p.pid(), "Thread.print"); err == nil {
			os.WriteFile(dump, []byte(out), 0o644)
		}
		return nil, fmt.Errorf("the service served %d requests in %s with %d clients: stuck (its threads: %s)", served, prof.Window, clients, dump)
	}
	if record {
		if err := jcmd(ctx, r.tools, p.pid(), "JFR.stop", "name=latscope-lab", "filename="+w.Recording); err != nil {
			return nil, err
		}
	}
	if err := <-loadDone; err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if encErr != nil {
		return nil, fmt.Errorf("write %s: %w", w.Results, encErr)
	}
	rep.Close()
	w.CPU, w.Own, w.Load = cpu1-cpu0, own1.sub(own0), rep
	if rep.Errors > 0 {
		return nil, fmt.Errorf("%d of %d requests failed (first: %v)", rep.Errors, rep.Requests, rep.TopErrors)
	}
	return w, nil
}
