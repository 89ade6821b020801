package dbhost

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/tier"
)

// TestRecorderSpinners records two processes that spin on the same CPU
// and one that sleeps, all children of the test. A spinner is runnable
// all the time, so over any window its run-queue wait is the window minus
// its time on the CPU (the kernel's own run counter, read apart); two
// spinners sharing one CPU each wait about half of it. The sleeper never
// waits for long.
func TestRecorderSpinners(t *testing.T) {
	tier.Timing(t)
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		t.Skipf("SKIP: no /proc/PID/schedstat on this kernel (CONFIG_SCHEDSTATS): %v", err)
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("SKIP: taskset (util-linux) is not installed; the recorder test pins two spinners to one CPU with it")
	}
	var spin []*exec.Cmd
	for range 2 {
		c := exec.Command(taskset, "-c", "0", "sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		spin = append(spin, c)
	}
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range append(spin, sleeper) {
			c.Process.Kill()
			c.Wait()
		}
	}()
	var out bytes.Buffer // read once Run has returned
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Recorder{Parent: os.Getpid()}.Run(ctx, &out) }()
	time.Sleep(300 * time.Millisecond)
	from, run0 := time.Now(), cpuRun(t, spin[0].Process.Pid)
	time.Sleep(time.Second)
	to, run1 := time.Now(), cpuRun(t, spin[0].Process.Pid)
	time.Sleep(100 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w, err := Read("rec", bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if w.Backends() < 3 {
		t.Fatalf("%d processes recorded, want at least the 3 children", w.Backends())
	}
	wait, ok := w.In(spin[0].Process.Pid, from, to)
	if !ok {
		t.Fatalf("window %v–%v not covered (recording %v–%v)", from, to, w.From, w.To)
	}
	want := to.Sub(from) - (run1 - run0)
	// The window's ends are placed to a period each, and the run counter
	// is read a few microseconds off them.
	if tol := 2*w.Period + 5*time.Millisecond; wait < want-tol || wait > want+tol {
		t.Errorf("spinner waited %v in the window by the recording, want %v ± %v (window %v, ran %v)", wait, want, tol, to.Sub(from), run1-run0)
	}
	if wait < 300*time.Millisecond {
		t.Errorf("spinner sharing a CPU waited only %v of %v", wait, to.Sub(from))
	}
	if sw, ok := w.In(sleeper.Process.Pid, from, to); !ok || sw > 20*time.Millisecond {
		t.Errorf("sleeper waited %v (covered %v), want about 0", sw, ok)
	}
	if _, ok := w.In(spin[0].Process.Pid, from.Add(-time.Hour), to); ok {
		t.Error("a window before the recording is covered")
	}
}

// cpuRun reads pid's time on a CPU.
func cpuRun(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		t.Fatal(err)
	}
	s, err := hostsig.ParseSchedstat(b)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run
}

func TestRecorderNoParent(t *testing.T) {
	err := Recorder{Parent: 1 << 30}.Run(context.Background(), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "children of PID") {
		t.Errorf("err = %v", err)
	}
}

// BenchmarkPass measures one sampling pass over 20 idle children (a
// PostgreSQL with 20 connections). At the default period a pass runs
// 100 times a second: ns/op × 100 / 1e9 is the share of one core the
// recorder takes; it reports that as core-%.
func BenchmarkPass(b *testing.B) {
	var kids []*exec.Cmd
	for range 20 {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		kids = append(kids, c)
	}
	defer func() {
		for _, c := range kids {
			c.Process.Kill()
			c.Wait()
		}
	}()
	s, err := Recorder{Parent: os.Getpid()}.start(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		now = now.Add(DefaultPeriod)
		if err := s.pass(now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*float64(time.Second/DefaultPeriod)/1e9*100, "core-%")
}

// TestRecorderParentExits: when the process whose children are recorded
// exits, Run ends with ErrParentExited and what it recorded is flushed,
// ending on a whole line.
func TestRecorderParentExits(t *testing.T) {
	tier.Timing(t)
	parent := exec.Command("sh", "-c", "sleep 1 & sleep 0.3")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	go parent.Wait() // reaped, so that its /proc entry goes
	var out bytes.Buffer
	err := Recorder{Parent: parent.Process.Pid}.Run(context.Background(), &out)
	if !errors.Is(err, ErrParentExited) {
		t.Fatalf("Run = %v, want ErrParentExited", err)
	}
	w, err := Read("rec", bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if w.Backends() == 0 || w.To.Sub(w.From) < 200*time.Millisecond {
		t.Errorf("recording of %d children over %v, want its sleeping children for about 300ms", w.Backends(), w.To.Sub(w.From))
	}
}

func TestWaitField(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"2226931 9036 142\n", 9036, true},
		{"1 0 0\n", 0, true},
		{"1 2\n", 0, false},
		{"12", 0, false},
		{"1  2 3", 0, false},
		{"1 x 3", 0, false},
	} {
		got, err := waitField([]byte(tc.in))
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("waitField(%q) = %v, %v", tc.in, got, err)
		}
		if tc.ok {
			s, _ := hostsig.ParseSchedstat([]byte(tc.in))
			if s.Wait != got {
				t.Errorf("waitField(%q) = %v, ParseSchedstat's Wait %v", tc.in, got, s.Wait)
			}
		}
	}
}
