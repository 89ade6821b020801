package pgcluster_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/tier"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// startOwn starts a cluster that the test stops itself; a t.Cleanup Stop
// only guards against leaks.
func startOwn(t *testing.T) *pgcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgcluster.Start(ctx, pgcluster.Options{})
	if errors.Is(err, pgcluster.ErrNoBinaries) || errors.Is(err, pgcluster.ErrNoPostgresUser) {
		t.Skipf("SKIP: no PostgreSQL here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// query runs sql on a new connection to c and returns the first column.
func query(t *testing.T, c *pgcluster.Cluster, sql string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		t.Fatalf("connect %s: %v", c.DSN(), err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql, pgx.QueryExecModeSimpleProtocol).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func TestQueryLandsInJSONLog(t *testing.T) {
	tier.Busy(t)
	c := pgtest.Shared(t)
	if got := query(t, c, "SELECT 1::text"); got != "1" {
		t.Fatalf("SELECT 1 = %q", got)
	}
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	query(t, c, "/*traceparent='"+tp+"'*/ SELECT pg_sleep(0.05)::text")
	path, err := c.LogFile()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, c.Dir()) || filepath.Ext(path) != ".json" {
		t.Errorf("LogFile = %s, want a .json file under %s", path, c.Dir())
	}
	line := waitForLine(t, path, tp)
	if !strings.Contains(line, `"message":"duration: `) {
		t.Errorf("log line has no duration message: %s", line)
	}
}

// waitForLine polls the log file until a line contains s: the logging
// collector writes asynchronously.
func waitForLine(t *testing.T, path, s string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for line := range bytes.Lines(b) {
			if bytes.Contains(line, []byte(s)) {
				return string(line)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no line contains %q after 10s; file has %d bytes", path, s, len(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTwoClustersAndConcurrentStop(t *testing.T) {
	tier.Busy(t)
	a := pgtest.Shared(t)
	b := startOwn(t)
	if a.Port() == b.Port() {
		t.Fatalf("both clusters on port %d", a.Port())
	}
	if a.Dir() == b.Dir() {
		t.Fatalf("both clusters in %s", a.Dir())
	}
	query(t, a, "SELECT 1::text")
	query(t, b, "SELECT 1::text")
	pid := postmasterPID(t, b)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = b.Stop() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Stop #%d: %v", i, err)
		}
	}
	assertGone(t, b, pid)
	if err := b.Stop(); err != nil {
		t.Errorf("Stop after Stop: %v", err)
	}
}

func TestSweepStaleCluster(t *testing.T) {
	tier.Busy(t)
	c := startOwn(t)
	if !strings.HasPrefix(filepath.Base(c.Dir()), pgcluster.DirPrefix) {
		t.Fatalf("cluster dir %s lacks the prefix %s", c.Dir(), pgcluster.DirPrefix)
	}
	pid := postmasterPID(t, c)
	dead := deadPID(t)
	if err := os.WriteFile(filepath.Join(c.Dir(), "owner"), fmt.Appendf(nil, "pid %d\n", dead), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := os.MkdirTemp("", pgcluster.DirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(live)
	if err := os.WriteFile(filepath.Join(live, "owner"), fmt.Appendf(nil, "pid %d\n", os.Getpid()), 0o644); err != nil {
		t.Fatal(err)
	}

	removed, err := pgcluster.Sweep()
	if err != nil {
		t.Errorf("Sweep: %v", err)
	}
	// Another test binary's Sweep may have got to c first; the end state counts.
	if contains(removed, live) {
		t.Errorf("Sweep removed %v, including the live owner's %s", removed, live)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("Sweep removed a live owner's dir: %v", err)
	}
	assertGone(t, c, pid)
	if err := c.Stop(); err != nil {
		t.Errorf("Stop after the server is gone: %v", err)
	}
}

// crashEnv makes the test binary a child that starts a cluster, opens a
// connection (so a backend runs), prints the cluster directory, and waits
// to be killed.
const crashEnv = "PGCLUSTER_TEST_CRASH_CHILD"

// TestServerDiesWithOwnerAndSweep kills the process that started a cluster
// with SIGKILL: the postmaster and every process under it must end with it
// (the postmaster is its direct child with a parent-death signal), and
// Sweep must then remove the directory the dead owner left.
func TestServerDiesWithOwnerAndSweep(t *testing.T) {
	tier.Busy(t)
	if os.Getenv(crashEnv) != "" {
		c, err := pgcluster.Start(context.Background(), pgcluster.Options{})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		conn, err := pgx.Connect(context.Background(), c.DSN())
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		defer conn.Close(context.Background())
		fmt.Println(c.Dir())
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("SKIP: no PostgreSQL here: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithOwnerAndSweep$")
	cmd.Env = append(os.Environ(), crashEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dir, err := bufio.NewReader(out).ReadString('\n')
	dir = strings.TrimSpace(dir)
	if err != nil || !strings.Contains(dir, pgcluster.DirPrefix) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", dir, err)
	}
	pid := readPID(t, filepath.Join(dir, "data"))
	tree := descendants(cmd.Process.Pid)
	if !slices.Contains(tree, pid) || len(tree) < 3 {
		t.Errorf("processes under the owner %d: %v; want the postmaster %d and its backends and helpers", cmd.Process.Pid, tree, pid)
	}
	cmd.Process.Kill() // the crash: no Stop
	cmd.Wait()
	killed := time.Now()
	deadline := killed.Add(15 * time.Second)
	for left := tree; ; {
		left = slices.DeleteFunc(left, func(p int) bool { return !isAlive(p) })
		if len(left) == 0 {
			t.Logf("the %d processes under the owner ended %v after its SIGKILL", len(tree), time.Since(killed).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after SIGKILL of the owner, these still run: %v (postmaster %d)", left, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Logf("another test binary swept %s first: %v", dir, err)
	}
	removed, err := pgcluster.Sweep()
	if err != nil {
		t.Errorf("Sweep: %v", err)
	}
	t.Logf("Sweep removed %v", removed) // maybe not dir: another test binary may sweep first
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s survived the sweep: %v", dir, err)
	}
}

// descendants lists the live processes under pid (not pid itself), from
// the parent PIDs in /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// isAlive reports whether pid runs and is not a zombie.
func isAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

func TestStartBadBinDir(t *testing.T) {
	tier.Busy(t)
	_, err := pgcluster.Start(context.Background(), pgcluster.Options{BinDir: t.TempDir()})
	if !errors.Is(err, pgcluster.ErrNoBinaries) {
		t.Fatalf("Start with an empty BinDir: %v, want ErrNoBinaries", err)
	}
	if !strings.Contains(err.Error(), "postgresql") || !strings.Contains(err.Error(), "existing PostgreSQL server") {
		t.Errorf("error does not name the package and the alternative: %v", err)
	}
}

func TestStartBadSettingFailsWithServerLog(t *testing.T) {
	tier.Busy(t)
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("SKIP: no PostgreSQL here: %v", err)
	}
	dir := filepath.Join(reachableTempDir(t), "c")
	_, err := pgcluster.Start(context.Background(), pgcluster.Options{
		Dir:      dir,
		Settings: map[string]string{"shared_buffers": "lots"},
	})
	if err == nil {
		t.Fatal("Start with shared_buffers=lots succeeded")
	}
	t.Logf("Start error (expected):\n%v", err)
	if !strings.Contains(err.Error(), "shared_buffers") {
		t.Errorf("error lacks the server log tail naming the setting: %v", err)
	}
	if _, serr := os.Stat(dir); serr == nil {
		t.Errorf("failed Start left %s behind", dir)
	}
}

func TestStartRefusesNonEmptyDir(t *testing.T) {
	tier.Busy(t)
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("SKIP: no PostgreSQL here: %v", err)
	}
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pgcluster.Start(context.Background(), pgcluster.Options{Dir: dir}); err == nil {
		t.Fatal("Start into a non-empty dir succeeded")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("failed Start deleted the caller's file: %v", err)
	}
}

// reachableTempDir is a test temp dir that the postgres user may enter.
func reachableTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// postmasterPID reads the server PID from the cluster's postmaster.pid.
func postmasterPID(t *testing.T, c *pgcluster.Cluster) int {
	t.Helper()
	return readPID(t, c.DataDir())
}

// readPID reads the first line of data/postmaster.pid.
func readPID(t *testing.T, data string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	return pid
}

// assertGone checks that the cluster's directory and postmaster are gone.
func assertGone(t *testing.T, c *pgcluster.Cluster, pid int) {
	t.Helper()
	if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists (stat: %v)", c.Dir(), err)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(b, []byte(c.DataDir())) {
		t.Errorf("postmaster %d still runs: %q", pid, b)
	}
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// BenchmarkStartStop measures a whole cluster life: initdb, start, stop,
// removal.
func BenchmarkStartStop(b *testing.B) {
	if _, err := pgcluster.FindBinDir(); err != nil {
		b.Skipf("SKIP: no PostgreSQL here: %v", err)
	}
	for b.Loop() {
		c, err := pgcluster.Start(context.Background(), pgcluster.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// firstWrite is a log writer that closes started on its first write.
type firstWrite struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	once    sync.Once
	started chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.once.Do(func() { close(w.started) })
	return w.buf.Write(p)
}

func (w *firstWrite) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestStartInterruptedDuringInitdb cancels Start while initdb runs (a
// Ctrl-C): the error is one line that says so, initdb's output goes to
// Options.Log only, and nothing is left behind.
func TestStartInterruptedDuringInitdb(t *testing.T) {
	tier.Busy(t)
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("SKIP: no PostgreSQL here: %v", err)
	}
	dir := filepath.Join(reachableTempDir(t), "c")
	log := &firstWrite{started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-log.started // initdb has begun
		cancel()
	}()
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir, Log: log})
	if err == nil {
		c.Stop()
		t.Fatal("Start succeeded although its ctx was cancelled during initdb")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error does not wrap context.Canceled: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "signal: killed") {
		t.Errorf("error is not one line saying it was cancelled:\n%s", msg)
	}
	if !strings.Contains(log.String(), "initdb") && !strings.Contains(log.String(), "database system") {
		t.Errorf("Options.Log lacks initdb's output: %q", log.String())
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("interrupted Start left %s behind: %v", dir, serr)
	}
}
