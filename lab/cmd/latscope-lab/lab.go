package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/lab"
	_ "github.com/latscope/latscope/lab/burst" // runtime overhead in the scheduler (docs/method.md §9)
	_ "github.com/latscope/latscope/lab/seed"  // the seed experiment
)

func init() {
	cli.Register("burn", "spin on one core until killed: the CPU burners of --loaded", runLabBurn)
	cli.Default = &cli.Command{
		Summary:   "run a reproducible experiment on real parts (demo service, upstream, PostgreSQL, load) and check predictions against measurements",
		Run:       runLab,
		Topics:    scenarioNames,
		TopicNoun: "scenario",
	}
}

// scenarioNames lists the scenarios' names.
func scenarioNames() []string {
	var names []string
	for _, s := range lab.Scenarios() {
		names = append(names, s.Name)
	}
	return names
}

// runLabBurn spins until it is killed (--loaded starts one per core).
func runLabBurn(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := cli.NewFlagSet("burn", "burn", stderr)
	cli.UsageWith(fs, stderr, "burn", "\nexamples:\n  latscope-lab burn &     one busy core, until killed\n")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	lab.Burn(ctx)
	return nil
}

// labCommand builds the command that runs latscope-lab itself with args
// (a scenario's services, burners and proxy); tests replace it.
var labCommand = func(ctx context.Context, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.CommandContext(ctx, exe, args...)
}

const labExamples = `
examples:
  latscope-lab                     the seed experiment with embedded defaults (about 80 seconds)
  latscope-lab --full              the seed's protocol: 60 s windows, 3 runs per mode, median
  latscope-lab --list              the scenarios
  latscope-lab --loaded dbwait     the dbwait scenario with a CPU burner on every core
  latscope-lab --db-url postgres://user@127.0.0.1:5432/db seed   use an existing PostgreSQL
`

// labOptions are the flags of `latscope-lab`.
type labOptions struct {
	list, full, short, json bool
	loaded                  bool
	out, dbURL              string
	clients                 int
	window                  time.Duration
	set                     map[string]bool // the flags given, whatever their value
}

// runLab is latscope-lab's Default command: it runs a scenario, the seed
// unless named.
func runLab(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var o labOptions
	fs := cli.NewFlagSet("", "[flags] [SCENARIO]", stderr)
	fs.BoolVar(&o.list, "list", false, "list the scenarios and exit")
	fs.BoolVar(&o.full, "full", false, "the seed's protocol: 60 s windows, 3 runs, median (about 11 minutes)")
	fs.BoolVar(&o.short, "short", false, "a quick check: 3 s windows (for tests; noisier)")
	fs.StringVar(&o.out, "o", "", "output `DIR` for report.md, JSON, traces and profiles (default lab-out/SCENARIO-TIME)")
	fs.StringVar(&o.dbURL, "db-url", "", "use this PostgreSQL `URL` instead of starting a private cluster")
	fs.IntVar(&o.clients, "clients", 0, "closed-model clients (default 20, as in the seed)")
	fs.DurationVar(&o.window, "window", 0, "traced window per run (default 20s; --full 60s)")
	fs.BoolVar(&o.json, "json", false, "print the scenario's JSON instead of the Markdown report")
	fs.BoolVar(&o.loaded, "loaded", false, "run a CPU burner on every core beside the scenario: its checks on a busy host")
	cli.UsageWith(fs, stderr, "[flags] [SCENARIO]", labExamples+"\nscenarios: "+strings.Join(scenarioNames(), ", ")+" (--list says what each is)\n")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// Flags may also follow the scenario (`latscope-lab jvm --loaded -o DIR`), as
	// they do the lab's subcommands.
	if fs.NArg() > 1 {
		rest := fs.Args()
		if err := fs.Parse(rest[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("want at most one scenario, got %q", append(rest[:1:1], fs.Args()...))
		}
		if err := fs.Parse(rest[:1]); err != nil {
			return err
		}
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if o.list {
		for _, s := range lab.Scenarios() {
			fmt.Fprintf(stdout, "%-14s %s\n", s.Name, s.Summary)
		}
		fmt.Fprintf(stdout, "\ncommands (latscope-lab COMMAND -h):\n")
		for _, n := range cli.Names() {
			c, _ := cli.Lookup(n)
			fmt.Fprintf(stdout, "  %-13s %s\n", n, c.Summary)
		}
		return nil
	}
	name := "seed"
	switch fs.NArg() {
	case 0:
	case 1:
		name = fs.Arg(0)
	default:
		return fmt.Errorf("want at most one scenario, got %q", fs.Args())
	}
	sc, ok := lab.Lookup(name)
	if !ok {
		if _, sub := cli.Lookup(name); sub {
			return fmt.Errorf("%q is a lab subcommand with flags of its own, not a scenario: run `latscope-lab %s [flags]` (its -h lists them)", name, name)
		}
		return fmt.Errorf("unknown scenario %q (scenarios: %s; lab subcommands: `latscope-lab --list`)", name, strings.Join(scenarioNames(), ", "))
	}
	// After the flags, leftovers of killed runs are swept (they belong to
	// dead processes). Everything that can refuse the run does so before
	// anything is created or started: flags, the output folder,
	// prerequisites, the database. Only then is the output folder created.
	prof, err := labProfile(&o)
	if err != nil {
		return err
	}
	if o.out == "" {
		o.out = filepath.Join("lab-out", name+"-"+time.Now().Format("20060102-150405"))
	}
	if removed, err := lab.SweepLeftovers(filepath.Dir(filepath.Clean(o.out))); len(removed) > 0 || err != nil {
		fmt.Fprintf(stderr, "lab: removed what killed runs left: %s%s\n", strings.Join(removed, ", "), errSuffix(err))
	}
	if err := checkOutDir(o.out); err != nil {
		return err
	}
	if err := checkNeeds(sc, o.dbURL); err != nil {
		return err
	}
	if o.dbURL != "" && slices.Contains(sc.Needs, "postgres") {
		if err := checkDBURL(ctx, o.dbURL); err != nil {
			return err
		}
	}
	env, err := labEnv(&o, prof)
	if err != nil {
		return err
	}
	return runScenario(ctx, sc, env, &o, stdout, stderr)
}

// errSuffix is "; err" on one line, or "" for a nil err.
func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return "; " + strings.ReplaceAll(err.Error(), "\n", "; ")
}

// labProfile is the measuring profile the flags ask for.
func labProfile(o *labOptions) (lab.Profile, error) {
	if o.full && o.short {
		return lab.Profile{}, errors.New("--full and --short exclude each other")
	}
	prof := lab.Default
	switch {
	case o.full:
		prof = lab.Full
	case o.short:
		prof = lab.Short
	}
	if o.clients < 0 || o.set["clients"] && o.clients == 0 {
		return prof, fmt.Errorf("--clients %d: want at least 1", o.clients)
	}
	if o.clients > 0 {
		prof.Clients = o.clients
	}
	if o.window != 0 || o.set["window"] {
		if o.window < time.Second || o.window%time.Second != 0 {
			return prof, fmt.Errorf("--window %s: want whole seconds, at least 1s", o.window)
		}
		prof.Window = o.window
	}
	return prof, nil
}

// checkOutDir refuses an output folder that exists and is not empty (a
// previous lab's, whose captures would clash with this run's), or is not a
// folder, before anything starts.
func checkOutDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("-o %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("-o %s: not a folder", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("-o %s: %w", dir, err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("-o %s: the folder is not empty (a previous lab's output?); name a new or empty folder", dir)
	}
	return nil
}

// labEnv creates the output folder and the lab log.
func labEnv(o *labOptions, prof lab.Profile) (*lab.Env, error) {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, fmt.Errorf("-o %s: %w", o.out, err)
	}
	logf, err := os.Create(filepath.Join(o.out, "lab.log"))
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", o.out, err)
	}
	return &lab.Env{Out: o.out, Log: logf, Detail: logf, Profile: prof, Command: labCommand, DBURL: o.dbURL}, nil
}

// dbConnectTimeout bounds the check that --db-url reaches PostgreSQL.
const dbConnectTimeout = 5 * time.Second

// checkDBURL connects to url once, within dbConnectTimeout, so that a wrong
// URL fails at once with one line naming its host and port (never its
// password), not after a service waited for it.
func checkDBURL(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("--db-url: %s", firstLine(err.Error())) // pgx redacts the password
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		addr = fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	cfg.ConnectTimeout = dbConnectTimeout
	cctx, cancel := context.WithTimeout(ctx, dbConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err == nil {
		err = conn.Ping(cctx)
		conn.Close(context.Background())
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	why := dbErrReason(cctx, err)
	if cfg.Password != "" {
		why = strings.ReplaceAll(why, cfg.Password, "xxxxx")
	}
	return fmt.Errorf("--db-url: no PostgreSQL at %s: %s", addr, why)
}

// dbErrReason is the short cause of a failed connection: a timeout, or the
// innermost error (connection refused, an authentication failure, ...).
func dbErrReason(ctx context.Context, err error) string {
	var ne net.Error
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Sprintf("no answer within %v (is it PostgreSQL?)", dbConnectTimeout)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Err.Error() // "connect: connection refused"
	}
	for {
		u := errors.Unwrap(err)
		if u == nil {
			break
		}
		err = u
	}
	return firstLine(err.Error())
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// findPGBinDir finds the PostgreSQL server binaries; tests replace it.
var findPGBinDir = pgcluster.FindBinDir

// checkNeeds says what is missing before anything starts.
func checkNeeds(sc lab.Scenario, dbURL string) error {
	for _, n := range sc.Needs {
		switch n {
		case "postgres":
			if dbURL != "" {
				continue
			}
			if _, err := findPGBinDir(); err != nil {
				return fmt.Errorf("scenario %s needs PostgreSQL: %w (--db-url URL)", sc.Name, err)
			}
		case "private-postgres":
			if dbURL != "" {
				return fmt.Errorf("scenario %s reads the server's own log, so it needs a private cluster: run it without --db-url", sc.Name)
			}
			if _, err := findPGBinDir(); err != nil {
				return fmt.Errorf("scenario %s needs PostgreSQL: %w", sc.Name, err)
			}
		case "root":
			if os.Geteuid() != 0 {
				return fmt.Errorf("scenario %s needs root (it creates cgroups and signals processes): run it with sudo", sc.Name)
			}
		}
	}
	if sc.Check != nil {
		if err := sc.Check(); err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	return nil
}

func runScenario(ctx context.Context, sc lab.Scenario, env *lab.Env, o *labOptions, stdout, stderr io.Writer) error {
	bar := newProgress(stderr, sc.Name)
	env.Progress = bar.set
	log := env.Log
	env.Log = io.MultiWriter(log, bar)
	defer log.(io.Closer).Close()
	unmark, err := lab.MarkRunning(env.Out)
	if err != nil {
		return fmt.Errorf("-o %s: %w", env.Out, err)
	}
	defer unmark()
	if o.loaded {
		burners, err := lab.StartBurners(ctx, runtime.NumCPU(), env.Command)
		if err != nil {
			return err
		}
		defer burners.Stop()
		env.Burners = runtime.NumCPU()
		fmt.Fprintf(env.Log, "lab: %d CPU burners (one per core) run beside the scenario\n", env.Burners)
	}
	start := time.Now()
	out, err := sc.Run(ctx, env)
	bar.done()
	logPath := filepath.Join(env.Out, "lab.log")
	if err != nil && ctx.Err() != nil {
		// Ctrl-C: whatever the parts said while they were being stopped
		// (initdb's output, "signal: killed") goes to the log only.
		fmt.Fprintf(log, "interrupted: %v\n", err)
		return fmt.Errorf("interrupted (log: %s)", logPath)
	}
	if err != nil {
		return fmt.Errorf("scenario %s: %w (log: %s)", sc.Name, err, logPath)
	}
	md := out.Report(sc.Name, env.Out, time.Since(start), time.Now(), env.Burners)
	if err := atomicfile.Write(filepath.Join(env.Out, "report.md"), func(w io.Writer) error { _, err := io.WriteString(w, md); return err }); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(env.Out, sc.Name+".json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out.JSON)
	}); err != nil {
		return err
	}
	if len(out.HTML) > 0 {
		if err := atomicfile.Write(filepath.Join(env.Out, "report.html"), func(w io.Writer) error { _, err := w.Write(out.HTML); return err }); err != nil {
			return err
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out.JSON); err != nil {
			return err
		}
	} else {
		fmt.Fprint(stdout, md)
	}
	files := "report.md, "
	if len(out.HTML) > 0 {
		files += "report.html, "
	}
	fmt.Fprintf(stderr, "wrote %s (%s%s.json and the runs' files)\n", env.Out, files, sc.Name)
	if failed := out.Failed(); len(failed) > 0 {
		var names []string
		for _, c := range failed {
			if c.Low != nil && c.High != nil {
				names = append(names, fmt.Sprintf("%s: got %s, 95 %% interval %s wholly outside %s", c.Name, c.Got, c.Interval(), c.Want))
				continue
			}
			names = append(names, fmt.Sprintf("%s: got %s, want %s", c.Name, c.Got, c.Want))
		}
		return cli.VerdictFailed("%d of %d checks failed: %s", len(failed), len(out.Checks), strings.Join(names, "; "))
	}
	return nil
}

// progress draws a one-line progress bar on a terminal, or prints steps.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	name  string
	tty   bool
	frac  float64
	step  string
	start time.Time
	stop  chan struct{}
}

func newProgress(w io.Writer, name string) *progress {
	p := &progress{w: w, name: name, start: time.Now(), stop: make(chan struct{})}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
			go p.tick()
		}
	}
	return p
}

func (p *progress) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

func (p *progress) set(frac float64, step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frac, p.step = frac, step
	if p.tty {
		p.draw()
		return
	}
	fmt.Fprintf(p.w, "lab %s: %3.0f%% %s\n", p.name, 100*frac, step)
}

func (p *progress) draw() {
	const width = 30
	n := int(p.frac * width)
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %3.0f%% %s (%s)", strings.Repeat("#", n), strings.Repeat(".", width-n), 100*p.frac, p.step, time.Since(p.start).Round(time.Second))
}

// Write shows log lines above the bar.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", b)
		p.draw()
	} else {
		p.w.Write(b)
	}
	return len(b), nil
}

func (p *progress) done() {
	close(p.stop)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K")
	}
}
