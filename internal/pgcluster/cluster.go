package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DirPrefix starts the name of every default cluster directory under
// os.TempDir(); Sweep looks for it.
const DirPrefix = "latscope-pg-"

// Layout of a cluster directory.
const (
	dataDir   = "data"       // the PostgreSQL data directory (PGDATA)
	sockDir   = "sock"       // the default unix_socket_directories
	pgctlLog  = "pg_ctl.log" // server stderr before the logging collector runs (named as when pg_ctl started it)
	ownerFile = "owner"      // PID and start time of the process that started the cluster
)

// Start-up limits.
const (
	defaultStartTimeout = 60 * time.Second // start-up bound when ctx has no deadline
	portAttempts        = 5                // tries with an auto-picked port lost to another process
)

// Cluster is a running throwaway PostgreSQL server and the directory that
// holds it. Its methods are safe for concurrent use.
type Cluster struct {
	dir  string
	data string
	port int
	run  *runner
	srv  atomic.Pointer[server] // the postmaster, once started
	stop func() error
}

// Start creates and starts a cluster: initdb (as the postgres user when
// root), then the postmaster as a child of this process that ends when this
// process dies. ctx bounds the start-up only. On failure
// everything is cleaned up: the server, if it came up, is stopped and the
// directory removed.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	binDir := opts.BinDir
	if binDir == "" {
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	} else if err := hasBinaries(binDir); err != nil {
		return nil, err
	}
	r, err := newRunner(binDir, opts.Log)
	if err != nil {
		return nil, err
	}
	dir, err := makeDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, data: filepath.Join(dir, dataDir), run: r}
	c.stop = sync.OnceValue(c.shutdown)
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()
	if err := c.prepare(ctx, opts.Settings); err != nil {
		return nil, err
	}
	if err := c.startServer(ctx, opts.Port); err != nil {
		return nil, err
	}
	return c, nil
}

// makeDir creates the cluster directory: a new temp dir, or dir itself,
// which must be absent or empty because Stop deletes it.
func makeDir(dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", DirPrefix)
		if err != nil {
			return "", fmt.Errorf("pgcluster: creating the cluster directory: %w", err)
		}
		return d, nil
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("pgcluster: cluster directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("pgcluster: creating the cluster directory: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("pgcluster: cluster directory: %w", err)
	}
	if len(ents) > 0 {
		return "", fmt.Errorf("pgcluster: cluster directory %s is not empty (Stop would delete it)", dir)
	}
	return dir, nil
}

// prepare records the owner, creates the socket directory, runs initdb and
// appends the settings to postgresql.conf.
func (c *Cluster) prepare(ctx context.Context, extra map[string]string) error {
	if err := writeOwner(c.dir); err != nil {
		return err
	}
	settings, err := mergeSettings(extra, c.dir)
	if err != nil {
		return err
	}
	sock := filepath.Join(c.dir, sockDir)
	if err := os.Mkdir(sock, 0o700); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	for _, p := range []string{c.dir, sock} {
		if err := c.run.chown(p); err != nil {
			return err
		}
	}
	err = c.run.run(ctx, "initdb "+c.data, "initdb", "-D", c.data,
		"-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "-N")
	if err != nil && c.run.asUser && strings.Contains(err.Error(), "Permission denied") {
		return fmt.Errorf("%w\nhint: user %s must be able to enter every parent directory of %s", err, serverUser, c.dir)
	}
	if err != nil {
		return err
	}
	return appendFile(filepath.Join(c.data, "postgresql.conf"), confText(settings))
}

// startServer starts the server on port, or on a free port when port is
// 0, retrying with a new port when another process took it first.
func (c *Cluster) startServer(ctx context.Context, port int) error {
	for attempt := 1; ; attempt++ {
		c.port = port
		if port == 0 {
			p, err := freePort()
			if err != nil {
				return err
			}
			c.port = p
		}
		err := c.startPostgres(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err // interrupted: one line; the output is in pg_ctl.log
		}
		logTail := serverLogTail(c.dir)
		if port == 0 && attempt < portAttempts && portTaken(logTail) {
			continue
		}
		return fmt.Errorf("%w\n%s", err, logTail)
	}
}

// startPostgres runs the postmaster in the foreground as a direct child of
// this process (not daemonized by pg_ctl, which would re-parent it), so that
// its parent-death signal, SIGQUIT (immediate shutdown: it ends its
// backends and removes its shared memory), ends the server when this
// process dies, even by SIGKILL. It waits until postmaster.pid says
// "ready", the server exits, or ctx's deadline (60 s without one) passes.
func (c *Cluster) startPostgres(ctx context.Context) error {
	what := fmt.Sprintf("postgres on 127.0.0.1:%d", c.port)
	logPath := filepath.Join(c.dir, pgctlLog)
	logf, err := os.Create(logPath) // truncated: an earlier attempt's bind error must not count again
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	defer logf.Close() // the server has its own descriptor
	cmd := c.run.command(context.Background(), "postgres", "-D", c.data, "-p", strconv.Itoa(c.port))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := start(cmd, syscall.SIGQUIT); err != nil {
		return fmt.Errorf("pgcluster: %s: %w", what, err)
	}
	srv := &server{cmd: cmd, exited: make(chan struct{})}
	go func() { srv.err = cmd.Wait(); close(srv.exited) }()
	c.srv.Store(srv)

	wait := defaultStartTimeout
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if pidFileReady(c.data, cmd.Process.Pid) {
			return nil
		}
		select {
		case <-srv.exited:
			return fmt.Errorf("pgcluster: %s: postgres: %v", what, srv.err)
		case <-ctx.Done():
			c.stopServer()
			return fmt.Errorf("pgcluster: %s: %w", what, context.Cause(ctx))
		case <-timeout.C:
			c.stopServer()
			return fmt.Errorf("pgcluster: %s: not ready after %v", what, wait.Round(time.Second))
		case <-tick.C:
		}
	}
}

// server is a running postmaster started by this process.
type server struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd.Wait returned
	err    error         // cmd.Wait's result, set before exited is closed
}

// PID returns the postmaster's process ID, from data/postmaster.pid.
func (c *Cluster) PID() (int, error) { return PostmasterPID(c.data) }

// PostmasterPID reads the postmaster's PID from DATADIR/postmaster.pid,
// of this package's clusters or any other PostgreSQL data directory.
func PostmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("the PostgreSQL data directory's postmaster.pid (is the server running?): %w", err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: first line %q is not a PID", filepath.Join(dataDir, "postmaster.pid"), first)
	}
	return pid, nil
}

// pidFileReady reports whether data/postmaster.pid names pid and its status
// line (the 8th, PostgreSQL 10 and later) says "ready", which is what pg_ctl
// start -w waits for.
func pidFileReady(data string, pid int) bool {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	return len(lines) >= 8 && strings.TrimSpace(lines[0]) == strconv.Itoa(pid) && strings.TrimSpace(lines[7]) == "ready"
}

// portTaken reports whether a server log says the port was in use.
func portTaken(log string) bool {
	return strings.Contains(log, "Address already in use") || strings.Contains(log, "could not bind")
}

// appendFile appends text to the file at path.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("pgcluster: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pgcluster: writing %s: %w", path, err)
	}
	return nil
}

// Port is the server's TCP port on 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// DSN is a libpq keyword/value connection string for the postgres superuser
// over TCP, accepted by pgx.Connect.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", c.port)
}

// URL is the connection string as a postgres:// URL.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Dir is the cluster directory, deleted by Stop.
func (c *Cluster) Dir() string { return c.dir }

// DataDir is the PostgreSQL data directory inside Dir.
func (c *Cluster) DataDir() string { return c.data }

// logFileWait bounds how long LogFile waits for the logging collector to
// name its file.
const logFileWait = 5 * time.Second

// LogFile returns the absolute path of the current jsonlog file, as named by
// <data>/current_logfiles. It waits briefly for the logging collector to
// write that file right after start-up.
func (c *Cluster) LogFile() (string, error) {
	meta := filepath.Join(c.data, "current_logfiles")
	deadline := time.Now().Add(logFileWait)
	for {
		b, err := os.ReadFile(meta)
		if err == nil {
			return jsonlogPath(c.data, meta, string(b))
		}
		if !errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
			return "", fmt.Errorf("pgcluster: %w (is logging_collector on?)", err)
		}
		time.Sleep(pollInterval)
	}
}

// jsonlogPath picks the "jsonlog <path>" line of current_logfiles.
func jsonlogPath(data, meta, text string) (string, error) {
	for line := range strings.Lines(text) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "jsonlog "); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(data, p)
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("pgcluster: %s names no jsonlog file (is log_destination jsonlog?)", meta)
}
