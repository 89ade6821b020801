package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/tier"
)

func TestDBHostErrors(t *testing.T) {
	dir, stale := t.TempDir(), t.TempDir()
	out := filepath.Join(dir, "rec.txt")
	if err := os.WriteFile(filepath.Join(stale, "postmaster.pid"), []byte("1073741824\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"neither", []string{"--out", out}, "give --pgdata DIR (the PostgreSQL data directory) or --pid PID"},
		{"both", []string{"--pid", "1", "--pgdata", dir, "--out", out}, "give --pgdata DIR or --pid PID, not both"},
		{"no out", []string{"--pid", "1"}, "flag -o is required"},
		{"period", []string{"--pid", "1", "--out", out, "--period", "100us"}, "flag --period 100µs: want 1ms or more"},
		{"no postmaster.pid", []string{"--pgdata", dir, "--out", out}, "--pgdata: the PostgreSQL data directory's postmaster.pid"},
		{"no such process", []string{"--pid", strconv.Itoa(1 << 30), "--out", out}, "--pid: PID 1073741824 is not running"},
		{"stale postmaster.pid", []string{"--pgdata", stale, "--out", out}, "--pgdata: postmaster.pid names PID 1073741824, which is not running: is the server running?"},
		{"argument", []string{"--pid", "1", "--out", out, "x"}, `unexpected argument "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, append([]string{"dbhost"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			oneLine(t, err.Error())
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s left behind", out)
			}
		})
	}
}

// TestDBHostRecords records this test process's children (a sleeping
// child) for a moment and reads the file back.
func TestDBHostRecords(t *testing.T) {
	tier.Timing(t)
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	out := filepath.Join(t.TempDir(), "rec.txt")
	_, stderr, err := runCLI(t, "dbhost", "--pid", strconv.Itoa(os.Getpid()), "--out", out, "--for", "300ms")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := dbhost.Read(out, f)
	if err != nil {
		t.Fatal(err)
	}
	if w.To.Sub(w.From) < 250e6 || w.Backends() == 0 {
		t.Errorf("recording %v–%v of %d processes, want about 300ms of the test's child", w.From, w.To, w.Backends())
	}
}

// TestDBHostStopsOnSignal: Ctrl-C (or SIGTERM) is how a recording without
// --for ends: dbhost stops at once, writes the whole file and exits 0.
func TestDBHostStopsOnSignal(t *testing.T) {
	tier.Timing(t)
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "rec.txt")
			cmd := exec.Command(os.Args[0], "dbhost", "--pid", strconv.Itoa(os.Getpid()), "--out", out)
			cmd.Env = append(os.Environ(), "LATSCOPE_TEST_MAIN=1")
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			for !strings.Contains(stderr.String(), "recording the run-queue wait") {
				select {
				case err := <-exited:
					t.Fatalf("dbhost exited before recording: %v\n%s", err, stderr)
				case <-time.After(10 * time.Millisecond):
				}
			}
			time.Sleep(200 * time.Millisecond)
			cmd.Process.Signal(sig)
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("dbhost after %v: %v\n%s", sig, err, stderr)
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("dbhost still running 20 s after %v", sig)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := dbhost.Read(out, f); err != nil {
				t.Errorf("the recording: %v", err)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *lockedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *lockedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
