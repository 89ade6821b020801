package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/cli/clitest"
	goldenfile "github.com/latscope/latscope/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/ (and, with LATSCOPE_RETRACE=1, re-record their traces)")

// TestMain lets the test binary act as latscope itself when
// LATSCOPE_TEST_MAIN=1, so tests can run it as a child process (exit
// codes, the whole standard error).
func TestMain(m *testing.M) {
	if os.Getenv(clitest.MainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runCLI runs the binary's command line in-process.
var runCLI = clitest.Run

// runExit runs the binary as a child process: its exit status and
// standard error.
var runExit = clitest.RunExit

// golden compares got with testdata/name, rewriting it with -update. A
// mismatch writes name.got beside it and shows a unified diff.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), []byte(got), *update)
}

// oneLine checks that an error output is one line.
var oneLine = clitest.OneLine
