package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
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
			PrintError(&b, c.err, c.debug)
			if b.String() != c.want {
				t.Errorf("printed %q, want %q", b.String(), c.want)
			}
			if !c.debug && strings.Count(b.String(), "\n") != 1 {
				t.Errorf("not one line: %q", b.String())
			}
		})
	}
}

// TestGlobalFlags: --debug before the command and LATSCOPE_DEBUG=1 are
// taken, and the rest is the command's.
func TestGlobalFlags(t *testing.T) {
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
		t.Setenv(DebugEnv, c.env)
		debug, rest := globalFlags(c.args)
		if debug != c.want || strings.Join(rest, " ") != "analyze x" {
			t.Errorf("globalFlags(%q) with %s=%q = %v, %q", c.args, DebugEnv, c.env, debug, rest)
		}
	}
}

// TestInCommand: a command's errors start with its name exactly once,
// the Default command's with none, and stay what they wrap.
func TestInCommand(t *testing.T) {
	err := inCommand("analyze", errors.New("want a trace file"))
	if ce, ok := errors.AsType[*commandError](err); !ok || ce.cmd != "analyze" || err.Error() != "analyze: want a trace file" {
		t.Errorf("err = %v (%T)", err, err)
	}
	if prefixed := inCommand("load", errors.New("load: bad URL")); prefixed.Error() != "load: bad URL" {
		t.Errorf("a prefixed error became %q", prefixed)
	}
	if got := inCommand("", errors.New("unknown scenario")); got.Error() != "unknown scenario" {
		t.Errorf("the Default command's error became %q", got)
	}
	if inCommand("x", nil) != nil {
		t.Error("inCommand(nil) is not nil")
	}
}

// TestExitStatus: 0 ran and all is well, 1 ran and a verdict failed, 2 a
// usage or input error — through the command wrapper too.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{inCommand("lab", VerdictFailed("1 of 10 checks failed: x")), 1},
		{inCommand("analyze", errors.New("t.trace: offset 12: bad trace data")), 2},
		{fmt.Errorf("wrapped: %w", VerdictFailed("miss")), 1},
	} {
		if got := ExitStatus(tc.err); got != tc.want {
			t.Errorf("ExitStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestVersionText: what the version command prints of build information.
func TestVersionText(t *testing.T) {
	got := versionText(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/latscope/latscope", Version: "v0.9.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "88acdfa"}, {Key: "vcs.time", Value: "2026-12-04T15:00:00Z"}, {Key: "vcs.modified", Value: "true"}}})
	want := "latscope v0.9.0\nmodule github.com/latscope/latscope\nrevision 88acdfa (2026-12-04T15:00:00Z), with uncommitted changes\ngo1.26.8\n"
	if got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
}

// TestDefaultDispatch: with a Default command, arguments that name no
// command are its own (a scenario, its flags); a command's name runs the
// command; `help TOPIC` prints the Default's help, `help NOPE` lists the
// commands and topics; the Default's errors carry no command's name.
func TestDefaultDispatch(t *testing.T) {
	saved, savedName := Default, Name
	defer func() { Default, Name = saved, savedName; delete(commands, "sub") }()
	Name = "prog"
	var ran []string
	Register("sub", "a command", func(ctx context.Context, stdout, stderr io.Writer, args []string) error {
		ran = append(ran, "sub "+strings.Join(args, " "))
		return nil
	})
	Default = &Command{Summary: "the default", TopicNoun: "scenario", Topics: func() []string { return []string{"alpha"} },
		Run: func(ctx context.Context, stdout, stderr io.Writer, args []string) error {
			fs := NewFlagSet("", "[flags] [SCENARIO]", stderr)
			fs.Bool("quick", false, "be quick")
			if err := fs.Parse(args); err != nil {
				return err
			}
			if fs.Arg(0) == "bad" {
				return errors.New("unknown scenario \"bad\"")
			}
			ran = append(ran, "default "+strings.Join(fs.Args(), " "))
			return nil
		}}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := Run(context.Background(), &out, io.Discard, args)
		return out.String(), err
	}
	for _, args := range [][]string{{}, {"alpha"}, {"--quick", "alpha"}, {"sub", "x"}} {
		if _, err := run(args...); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	if got := strings.Join(ran, "|"); got != "default |default alpha|default alpha|sub x" {
		t.Errorf("ran %q", got)
	}
	if out, err := run("help", "alpha"); err != nil || !strings.Contains(out, "usage: prog [flags] [SCENARIO]") || !strings.Contains(out, "-quick") {
		t.Errorf("help alpha: %v\n%s", err, out)
	}
	if out, err := run("-h"); err != nil || !strings.Contains(out, "usage: prog [flags] [SCENARIO]") || !strings.Contains(out, "\ncommands:\n  sub ") {
		t.Errorf("-h: %v\n%s", err, out)
	}
	if _, err := run("help", "nope"); err == nil || err.Error() != `help: unknown command or scenario "nope" (sub, alpha)` {
		t.Errorf("help nope: %v", err)
	}
	if _, err := run("bad"); err == nil || err.Error() != `unknown scenario "bad"` {
		t.Errorf("bad: %v, want the default's error without a command's name", err)
	}
}
