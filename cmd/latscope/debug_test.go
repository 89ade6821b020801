package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// detailedError stands for tracein's errors, which carry Details.
type detailedError struct{ msg, details string }

func (e *detailedError) Error() string   { return e.msg }
func (e *detailedError) Details() string { return e.details }

// TestPrintError: without --debug every error is exactly one line; with it
// the details of every error in the chain follow.
func TestPrintError(t *testing.T) {
	inner := &detailedError{"t.trace: offset 120: bad event", "events before offset 120:\n  EvGoStart g=7\n  EvGoBlock g=7"}
	wrapped := fmt.Errorf("analyze: %w", inner)
	joined := errors.Join(errors.New("first"), fmt.Errorf("second: %w", inner))
	cases := []struct {
		name  string
		err   error
		debug bool
		want  string
	}{
		{"plain", errors.New("analyze: no such file"), false, "latscope: analyze: no such file\n"},
		{"several lines", errors.New("analyze: bad\nsecond line\nthird"), false, "latscope: analyze: bad (--debug for details)\n"},
		{"details", wrapped, false, "latscope: analyze: t.trace: offset 120: bad event (--debug for details)\n"},
		{"several lines, debug", errors.New("analyze: bad\nsecond line"), true, "latscope: analyze: bad\nsecond line\n"},
		{"details, debug", wrapped, true, "latscope: analyze: t.trace: offset 120: bad event\n\ndetails:\nevents before offset 120:\n  EvGoStart g=7\n  EvGoBlock g=7\n"},
		{"joined, debug", joined, true, "latscope: first\nsecond: t.trace: offset 120: bad event\n\ndetails:\nevents before offset 120:\n  EvGoStart g=7\n  EvGoBlock g=7\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			printError(&b, c.err, c.debug)
			if b.String() != c.want {
				t.Errorf("printed %q, want %q", b.String(), c.want)
			}
			if !c.debug && strings.Count(b.String(), "\n") != 1 {
				t.Errorf("not one line: %q", b.String())
			}
		})
	}
}

// TestDebugFlag: --debug before the command and LATSCOPE_DEBUG=1 are taken,
// and the command still runs.
func TestDebugFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{[]string{"analyze", "x"}, "", false},
		{[]string{"--debug", "analyze", "x"}, "", true},
		{[]string{"-debug", "analyze", "x"}, "", true},
		{[]string{"analyze", "x"}, "1", true},
		{[]string{"analyze", "x"}, "0", false},
	} {
		t.Setenv(debugEnv, c.env)
		debug, rest := globalFlags(c.args)
		if debug != c.want || strings.Join(rest, " ") != "analyze x" {
			t.Errorf("globalFlags(%q) with %s=%q = %v, %q", c.args, debugEnv, c.env, debug, rest)
		}
	}
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
	cmd.Env = append(os.Environ(), "LATSCOPE_TEST_MAIN=1", debugEnv+"=1")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.HasPrefix(string(out), "latscope: analyze: flag provided") {
		t.Errorf("%s=1: err = %v, output %q", debugEnv, err, out)
	}
}

// TestHelpForms: "help CMD", "--help CMD" and "-h CMD" print the command's
// help and succeed (they printed "flag: help requested"
// and exited 2).
func TestHelpForms(t *testing.T) {
	for _, args := range [][]string{
		{"help", "analyze"}, {"--help", "analyze"}, {"-h", "analyze"}, {"-help", "analyze"},
		{"analyze", "-h"}, {"analyze", "--help"}, {"--debug", "help", "analyze"}, {"help", "lab", "serve"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, _, err := runCLI(t, args...)
			want := "usage: latscope analyze"
			if args[len(args)-1] == "serve" {
				want = "usage: latscope lab serve"
			}
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

// TestCommandError: a command's errors start with its name exactly once,
// and stay what they wrap.
func TestCommandError(t *testing.T) {
	_, _, err := runCLI(t, "analyze")
	var ce *commandError
	if !errors.As(err, &ce) || ce.cmd != "analyze" || !strings.HasPrefix(err.Error(), "analyze: want a trace file") {
		t.Errorf("err = %v (%T)", err, err)
	}
	prefixed := inCommand("load", errors.New("load: bad URL"))
	if prefixed.Error() != "load: bad URL" {
		t.Errorf("a prefixed error became %q", prefixed)
	}
	if inCommand("x", nil) != nil {
		t.Error("inCommand(nil) is not nil")
	}
}
