package main

import (
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/cli/clitest"
)

// TestHelpForms: "help CMD", "CMD -h" print the command's help; "-h",
// "help" and "--help" print the scenario runner's flags and the commands.
func TestHelpForms(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"help", "serve"}, []string{"usage: latscope-lab serve --upstream URL"}},
		{[]string{"serve", "-h"}, []string{"usage: latscope-lab serve --upstream URL"}},
		{[]string{"-h"}, []string{"usage: latscope-lab [flags] [SCENARIO]", "\ncommands:\n", "  proxy ", "  serve "}},
		{[]string{"help"}, []string{"usage: latscope-lab [flags] [SCENARIO]", "  burn "}},
		{[]string{"--debug", "--help"}, []string{"usage: latscope-lab [flags] [SCENARIO]"}},
		{[]string{"help", "seed"}, []string{"usage: latscope-lab [flags] [SCENARIO]", "scenarios: ", "seed"}},
		{[]string{"help", "help"}, []string{"usage: latscope-lab [flags] [SCENARIO]", "\ncommands:\n"}},
		{[]string{"--list"}, []string{"dbwait-faults  ", "\ncommands (latscope-lab COMMAND -h):\n"}},
	} {
		stdout, _, err := runCLI(t, tc.args...)
		for _, w := range tc.want {
			if err != nil || !strings.Contains(stdout, w) {
				t.Errorf("%q: err = %v, want %q in:\n%s", tc.args, err, w, stdout)
			}
		}
	}
	if code, stderr := runExit(t, "--nope"); code != 2 || stderr != "latscope-lab: flag provided but not defined: -nope\n" {
		t.Errorf("--nope: exit %d, stderr %q", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "nope"}, `latscope-lab: help: unknown command or scenario "nope" (burn, `},
		{[]string{"burn", "extra"}, `latscope-lab: burn: unexpected argument "extra"`},
		{[]string{"--clients", "0", "seed"}, "latscope-lab: --clients 0: want at least 1"},
		{[]string{"--window", "0", "seed"}, "latscope-lab: --window 0s: want whole seconds, at least 1s"},
	} {
		if code, stderr := runExit(t, tc.args...); code != 2 || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line starting %q", tc.args, code, stderr, tc.want)
		}
	}
	if code, stderr := runExit(t, "proxy"); code != 2 || !strings.HasPrefix(stderr, "latscope-lab: proxy: ") {
		t.Errorf("proxy without --to: exit %d, stderr %q", code, stderr)
	}
}

// TestHelpOneDefault: no flag's help states two defaults, in any command.
func TestHelpOneDefault(t *testing.T) {
	clitest.HelpOneDefault(t)
}

// TestDocsCoverCommands: docs/lab.md names every command of latscope-lab,
// and every flag of each (and of the scenario runner) is documented in
// docs/.
func TestDocsCoverCommands(t *testing.T) {
	index, err := os.ReadFile("../../../docs/lab.md")
	if err != nil {
		t.Fatal(err)
	}
	clitest.DocsCoverCommands(t, clitest.Docs(t, "../../../docs"), string(index), "latscope-lab ")
}

// TestDocsExitStatus: the exit-status table of docs/commands.md has a row
// for latscope-lab and each of its commands.
func TestDocsExitStatus(t *testing.T) {
	b, err := os.ReadFile("../../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	clitest.ExitStatusRows(t, string(b), "latscope-lab ")
}
