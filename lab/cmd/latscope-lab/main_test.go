package main

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/cli/clitest"
)

// TestMain lets the test binary act as latscope-lab itself when
// LATSCOPE_TEST_MAIN=1, so tests can run it as a child process (the lab's
// service processes, burners and proxy; exit codes).
func TestMain(m *testing.M) {
	if os.Getenv(clitest.MainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:]))
	}
	labCommand = func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), clitest.MainEnv+"=1")
		return cmd
	}
	os.Exit(m.Run())
}

// runCLI runs the binary's command line in-process.
var runCLI = clitest.Run

// runExit runs the binary as a child process: its exit status and
// standard error.
var runExit = clitest.RunExit

var oneLine = clitest.OneLine

var listDir = clitest.ListDir
