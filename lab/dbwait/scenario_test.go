package dbwait

import (
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab"
)

var update = flag.Bool("update", false, "TestLab: copy the run's traces and server logs into ../../internal/dbwait/testdata/lab, the dbwait package's real captures; TestKeptFaultRuns: rewrite the kept fault-suite runs' golden files")

// serveEnv makes the test binary act as `latscope-lab dbwait-serve`, so
// the scenario can start its service as a process of its own.
const serveEnv = "LATSCOPE_DBWAIT_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		args := os.Args[1:] // dbwait-serve FLAGS..., or burn
		if len(args) == 1 && args[0] == "burn" {
			lab.Burn(ctx)
			os.Exit(0)
		}
		if len(args) > 0 && args[0] == "proxy" {
			if err := proxyMain(ctx, args[1:]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			os.Exit(0)
		}
		if len(args) < 1 || args[0] != "dbwait-serve" {
			fmt.Fprintf(os.Stderr, "want dbwait-serve ..., got %q\n", args)
			os.Exit(2)
		}
		err := ServeMain(ctx, os.Stdout, os.Stderr, args[1:])
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testEnv is a lab environment whose service processes are this binary.
func testEnv(t *testing.T, prof lab.Profile) *lab.Env {
	return &lab.Env{
		Out: t.TempDir(), Log: testWriter{t}, Profile: prof,
		Command: func(ctx context.Context, args ...string) *exec.Cmd {
			cmd := exec.CommandContext(ctx, os.Args[0], args...)
			cmd.Env = append(os.Environ(), serveEnv+"=1")
			return cmd
		},
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }

// needLab skips, loudly, where the scenario cannot run.
func needLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP (loud): the dbwait lab needs root: it creates a cgroup with a CFS quota and sends SIGSTOP")
	}
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("SKIP (loud): the dbwait lab needs PostgreSQL server binaries: %v", err)
	}
	if testing.Short() {
		t.Skip("SKIP: -short: the dbwait lab takes about 35 s")
	}
}

// TestLab runs the whole scenario on real parts with 3 s windows and
// asserts the acceptance: each condition gets its verdict. It runs
// only with -update, to record the dbwait package's captures again: one
// run per condition judges each verdict on one draw, and TestFaultSuite
// judges the same faults (lock, pauses, quota, CPU, proxy delays, none)
// over many statements at a stated acceptance, quiet and loaded.
func TestLab(t *testing.T) {
	tier.Timing(t)
	if !*update {
		t.Skip("runs with -update (it records internal/dbwait/testdata/lab again); TestFaultSuite judges the same faults statistically")
	}
	needLab(t)
	env := testEnv(t, lab.Short)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.Markdown)
	// Every check is asserted, the proxy's too: the VM's trickle of steal
	// ticks during the proxy window is no evidence of steal for dbwait's
	// rule (steal per CPU of half the difference, and a stall in the trace).
	for _, c := range out.Checks {
		if c.OK {
			t.Logf("pass: %s: %s", c.Name, c.Got)
		} else {
			t.Errorf("check failed: %s: got %s, want %s", c.Name, c.Got, c.Want)
		}
	}
	for _, c := range out.JSON.(*Result).Conditions {
		if c.Name == "proxy" {
			t.Logf("proxy: steal +%g ms over the window, verdicts %v, diff p50 %.3f ms", c.StealMs, c.Verdicts, c.DiffP50Ms)
		}
	}
	if len(out.Checks) != 5 {
		t.Errorf("%d checks, want 5 (lock, pause, quota, cpu, proxy)", len(out.Checks))
	}
	res := out.JSON.(*Result)
	for _, c := range res.Conditions {
		for _, r := range c.Runs {
			for _, f := range []string{r.Trace, r.PGLog} {
				if st, err := os.Stat(filepath.Join(env.Out, f)); err != nil || st.Size() == 0 {
					t.Errorf("%s: the run wrote no %s", r.Run, f)
				}
			}
		}
	}
	if *update {
		saveCaptures(t, env.Out, res)
	}
}

// saveCaptures copies each condition's first run into the dbwait
// package's testdata.
func saveCaptures(t *testing.T, out string, res *Result) {
	dir := filepath.Join("..", "..", "internal", "dbwait", "testdata", "lab")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Conditions {
		r := c.Runs[0]
		for from, to := range map[string]string{r.Trace: c.Name + ".trace.gz", r.PGLog: c.Name + ".postgresql.json.gz"} {
			gzipFile(t, filepath.Join(out, from), filepath.Join(dir, to))
		}
	}
	t.Logf("updated %s", dir)
}

// gzipFile writes a gzip copy of from to to.
func gzipFile(t *testing.T, from, to string) {
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(dst, gzip.BestCompression)
	if _, err := io.Copy(zw, src); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(zw.Close(), dst.Close()); err != nil {
		t.Fatal(err)
	}
}
