package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/cli"
)

// TestDebugFlag: --debug before the command and LATSCOPE_DEBUG=1 are taken,
// and the command still runs.
func TestDebugFlag(t *testing.T) {
	if _, _, err := runCLI(t, "--debug", "analyze", "-h"); err != nil {
		t.Errorf("--debug analyze -h: %v", err)
	}
	_, _, err := runCLI(t, "--verbose", "analyze", "x")
	if err == nil || !strings.Contains(err.Error(), "unknown global flag --verbose") {
		t.Errorf("--verbose: err = %v", err)
	}
	// In a process of its own: the exit status and the whole stderr.
	code, stderr := runExit(t, "--debug", "analyze", "--bogus", "x")
	if code != 2 || stderr != "latscope: analyze: flag provided but not defined: -bogus\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	cmd := exec.Command(os.Args[0], "analyze", "--bogus", "x")
	cmd.Env = append(os.Environ(), "LATSCOPE_TEST_MAIN=1", cli.DebugEnv+"=1")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.HasPrefix(string(out), "latscope: analyze: flag provided") {
		t.Errorf("%s=1: err = %v, output %q", cli.DebugEnv, err, out)
	}
}

// TestHelpForms: "help CMD", "--help CMD" and "-h CMD" print the command's
// help and succeed (they printed "flag: help requested"
// and exited 2).
func TestHelpForms(t *testing.T) {
	for _, args := range [][]string{
		{"help", "analyze"}, {"--help", "analyze"}, {"-h", "analyze"}, {"-help", "analyze"},
		{"analyze", "-h"}, {"analyze", "--help"}, {"--debug", "help", "analyze"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, _, err := runCLI(t, args...)
			want := "usage: latscope analyze"
			if err != nil || !strings.Contains(stdout, want) {
				t.Errorf("err = %v, stdout:\n%s", err, stdout)
			}
		})
	}
	if _, _, err := runCLI(t, "help", "analyse"); err == nil || !strings.Contains(err.Error(), `help: unknown command "analyse"`) {
		t.Errorf("help analyse: err = %v", err)
	}
	if code, stderr := runExit(t, "help", "analyze"); code != 0 || stderr != "" {
		t.Errorf("help analyze: exit %d, stderr %q", code, stderr)
	}
}

// TestCommandError: a command's errors start with its name exactly once.
func TestCommandError(t *testing.T) {
	if _, _, err := runCLI(t, "analyze"); err == nil || !strings.HasPrefix(err.Error(), "analyze: want a trace file") {
		t.Errorf("err = %v (%T)", err, err)
	}
}
