package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/cli"
)

// TestMain lets the test binary act as latscope-lab itself when
// LATSCOPE_TEST_MAIN=1, so tests can run it as a child process (the lab's
// service processes, burners and proxy; exit codes).
func TestMain(m *testing.M) {
	if os.Getenv("LATSCOPE_TEST_MAIN") == "1" {
		os.Exit(cli.Main(os.Args[1:]))
	}
	labCommand = func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), "LATSCOPE_TEST_MAIN=1")
		return cmd
	}
	os.Exit(m.Run())
}

// runCLI runs latscope-lab in-process and returns stdout, stderr and the
// error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := cli.Run(context.Background(), &stdout, &stderr, args)
	return stdout.String(), stderr.String(), err
}

// runExit runs latscope-lab as a child process and returns its exit code
// and stderr.
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

// oneLine checks that stderr is one line and returns it trimmed.
func oneLine(t *testing.T, stderr string) string {
	t.Helper()
	s := strings.TrimSpace(stderr)
	if strings.Contains(s, "\n") {
		t.Errorf("error output is not one line:\n%s", s)
	}
	return s
}

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
