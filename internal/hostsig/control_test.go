package hostsig

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig/internal/tier"
)

func TestNewCgroupBadName(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", "x\ny"} {
		if _, err := NewCgroup(name); err == nil {
			t.Errorf("NewCgroup(%q) succeeded", name)
		}
	}
}

// newTestCgroup makes a cgroup for one test and removes it at the end; it skips the test
// when this is not root or the machine has no writable cpu hierarchy.
func newTestCgroup(t *testing.T) *Cgroup {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: CFS quota tests need root to create cgroups")
	}
	c, err := NewCgroup(fmt.Sprintf("latscope-test-%d-%s", os.Getpid(), filepath.Base(t.Name())))
	if err != nil {
		t.Skipf("SKIP: machine has no writable cpu cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Errorf("Remove: %v", err)
		}
		if err := c.Remove(); err != nil {
			t.Errorf("second Remove: %v", err)
		}
		for _, dir := range c.dirs() {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s still there after Remove: %v", dir, err)
			}
		}
	})
	return c
}

func TestSetQuota(t *testing.T) {
	c := newTestCgroup(t)
	tests := []struct {
		cpus    float64
		period  time.Duration
		want    Quota
		wantErr string
	}{
		{0.2, 0, Quota{true, 0.2, DefaultPeriod}, ""},
		{1.5, 50 * time.Millisecond, Quota{true, 1.5, 50 * time.Millisecond}, ""},
		{0, 0, Quota{Period: DefaultPeriod}, ""},
		{math.Inf(1), 0, Quota{Period: DefaultPeriod}, ""},
		{0.001, 0, Quota{}, "below the 1ms minimum"},
		{1, 2 * time.Second, Quota{}, "outside 1ms..1s"},
	}
	if err := c.SetWeight(0); err == nil {
		t.Errorf("SetWeight(0) succeeded")
	}
	for _, tt := range tests {
		err := c.SetQuota(tt.cpus, tt.period)
		checkErr(t, err, tt.wantErr)
		if err != nil {
			continue
		}
		if got, err := c.Quota(); err != nil || got != tt.want {
			t.Errorf("SetQuota(%v, %v): read back %v, %v; want %v", tt.cpus, tt.period, got, err, tt.want)
		}
	}
}

// spinner is a shell that spins on a CPU once it reads a line.
type spinner struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startSpinner(t *testing.T) *spinner {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "read x; while :; do :; done")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("SKIP: cannot start /bin/sh: %v", err)
	}
	s := &spinner{cmd, stdin}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return s
}

func (s *spinner) start(t *testing.T) {
	if _, err := io.WriteString(s.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// TestThrottling runs a CPU spinner for 1 s under a 0.2-CPU quota, either in the quota's
// cgroup or in a child of it without its own quota (a parent limit, which Go's GOMAXPROCS
// misses), and checks every signal the classification of docs/method.md §8 relies on.
//
// Tolerance on the spinner's CPU: the spin may start anywhere in a period, so one period's
// quota (20 ms) of phase; /proc truncates utime and stime to 10 ms ticks (two fields, two
// samples: 20 ms); and the kernel notices an exhausted quota only at its next tick, ≤ 10 ms.
func TestThrottling(t *testing.T) {
	tier.Timing(t)
	const cpus, period, spin = 0.2, 100 * time.Millisecond, time.Second
	for _, child := range []string{"", "inner"} {
		t.Run("child="+child, func(t *testing.T) {
			c := newTestCgroup(t)
			if err := c.SetQuota(cpus, period); err != nil {
				t.Fatal(err)
			}
			// Other processes may keep both CPUs busy; the highest weight leaves the quota
			// as the only limit on the spinner.
			if err := c.SetWeight(10000); err != nil {
				t.Fatal(err)
			}
			sp := startSpinner(t)
			pid := sp.cmd.Process.Pid
			s, err := NewSampler(pid, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			before, err := s.Sample() // in the test's own cgroup; the sampler must follow the move
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Add(pid); err != nil {
				t.Fatal(err)
			}
			wantPath := "/" + c.Name
			if child != "" {
				if err := mkdirCgroup(filepath.Join(c.Dir, child)); err != nil {
					t.Fatal(err)
				}
				if err := writeCgroup(filepath.Join(c.Dir, child), "cgroup.procs", strconv.Itoa(pid)); err != nil {
					t.Fatal(err)
				}
				wantPath += "/" + child
			}
			checkLimit(t, pid, c, child)

			a, err := s.Sample()
			if err != nil {
				t.Fatal(err)
			}
			sp.start(t)
			time.Sleep(spin)
			b, err := s.Sample()
			if err != nil {
				t.Fatal(err)
			}
			if b.CgroupPath != wantPath {
				t.Errorf("CgroupPath %q, want %q", b.CgroupPath, wantPath)
			}
			if before.CgroupPath == b.CgroupPath || Diff(before, b).Has(SourceThrottle) {
				t.Errorf("move from %s to %s not noticed", before.CgroupPath, b.CgroupPath)
			}
			d := Diff(a, b)
			t.Logf("interval %v: cpu %v, run %v, wait %v, periods %d, throttled %d (%v), cgroup PSI some %v full %v, system PSI some %v",
				d.Interval, d.CPU(), d.Run, d.Wait, d.Periods, d.Throttled, d.ThrottledTime, d.CgroupSome, d.CgroupFull, d.SystemSome)
			checkThrottled(t, d, c)
			want := time.Duration(cpus * float64(d.Interval))
			tol := time.Duration(cpus*float64(period)) + 2*10*time.Millisecond + 10*time.Millisecond
			if diff := d.CPU() - want; diff < -tol || diff > tol {
				t.Errorf("spinner CPU %v, want %v ± %v (0.2 × %v)", d.CPU(), want, tol, d.Interval)
			}
			if d.Run < d.CPU()-tol || d.Run > d.CPU()+tol {
				t.Errorf("schedstat run %v disagrees with utime+stime %v", d.Run, d.CPU())
			}
		})
	}
}

func checkThrottled(t *testing.T, d Delta, c *Cgroup) {
	t.Helper()
	for src := range NumSources {
		if !d.Has(src) && (src != SourceCgroupPSI || c.V2Dir != "") {
			t.Errorf("%v absent: %s", src, d.Absent[src])
		}
	}
	if d.Throttled == 0 || d.ThrottledTime <= 0 {
		t.Errorf("no throttling counted: throttled %d, %v", d.Throttled, d.ThrottledTime)
	}
	if d.Wait < d.Interval/2 {
		t.Errorf("run-queue wait %v, want most of %v (throttled time counts as wait)", d.Wait, d.Interval)
	}
	if c.V2Dir != "" && d.CgroupSome <= 0 {
		t.Errorf("cgroup PSI some did not grow")
	}
	if d.SystemSome <= 0 {
		t.Errorf("system PSI some did not grow")
	}
}

// checkLimit asserts that the tightest limit is the cgroup's 0.2 CPU, also seen from a child.
func checkLimit(t *testing.T, pid int, c *Cgroup, child string) {
	t.Helper()
	l, err := ReadLimit(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Limited || math.Abs(l.CPUs-0.2) > 1e-9 || l.Path != "/"+c.Name {
		t.Errorf("limit %+v, want 0.2 CPU at /%s", l, c.Name)
	}
	if child != "" && l.Own.Limited {
		t.Errorf("own quota %v in a child without a quota", l.Own)
	}
	if GOMAXPROCSFor(l.Own, 2) == GOMAXPROCSFor(l.Quota, 1) && child != "" {
		t.Logf("GOMAXPROCS from own cgroup %d, from the binding limit %d", GOMAXPROCSFor(l.Own, 2), GOMAXPROCSFor(l.Quota, 2))
	}
}
