package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/dbhost"
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
		{"no out", []string{"--pid", "1"}, "flag --out is required"},
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
