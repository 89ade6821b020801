package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/cli"
	goldenfile "github.com/latscope/latscope/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/ (and, with LATSCOPE_RETRACE=1, re-record their traces)")

// TestMain lets the test binary act as latscope itself when
// LATSCOPE_TEST_MAIN=1, so tests can run it as a child process (exit
// codes, the whole standard error).
func TestMain(m *testing.M) {
	if os.Getenv("LATSCOPE_TEST_MAIN") == "1" {
		os.Exit(cli.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runCLI runs latscope in-process and returns stdout, stderr and the error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := cli.Run(context.Background(), &stdout, &stderr, args)
	return stdout.String(), stderr.String(), err
}

// runExit runs latscope as a child process and returns its exit code and stderr.
func runExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LATSCOPE_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return 0, ""
}

// golden compares got with testdata/name, rewriting it with -update. A
// mismatch writes name.got beside it and shows a unified diff.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), []byte(got), *update)
}

func oneLine(t *testing.T, stderr string) string {
	t.Helper()
	s := strings.TrimSpace(stderr)
	if strings.Contains(s, "\n") {
		t.Errorf("error output is not one line:\n%s", s)
	}
	return s
}
