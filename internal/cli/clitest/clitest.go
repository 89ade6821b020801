// Package clitest holds the checks every latscope binary's tests make of
// its command table: the docs name every command and flag, the exit-status
// table has a row per command, no help states two defaults.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/cli"
)

// Run runs the binary's command line in-process and returns stdout,
// stderr and the error.
func Run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := cli.Run(context.Background(), &stdout, &stderr, args)
	return stdout.String(), stderr.String(), err
}

// Docs reads every Markdown file of docsDir into one string.
func Docs(t *testing.T, docsDir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(docsDir, "*.md"))
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

// DocsCoverCommands checks that index names every command as
// "`"+prefix+name and that every flag of every command (and of the
// Default command) is documented somewhere in docs.
func DocsCoverCommands(t *testing.T, docs, index, prefix string) {
	t.Helper()
	for _, name := range cli.Names() {
		if !strings.Contains(index, "`"+prefix+name) {
			t.Errorf("the command index does not list `%s%s`", prefix, name)
		}
		checkFlags(t, name, docs)
	}
	if cli.Default != nil {
		checkFlags(t, "", docs)
	}
}

// checkFlags asks the command for its -h and checks that every flag of its
// flag set is documented in docs.
func checkFlags(t *testing.T, name, docs string) {
	t.Helper()
	fs, err := cli.FlagsOf(t.Context(), name)
	if err != nil {
		t.Error(err)
		return
	}
	fs.VisitAll(func(f *flag.Flag) {
		re := regexp.MustCompile(`(^|[^\w-])--?` + regexp.QuoteMeta(f.Name) + `\b`)
		if !re.MatchString(docs) {
			t.Errorf("%s %s: flag -%s is not documented in docs/", cli.Name, name, f.Name)
		}
	})
}

// ExitStatusRows checks that the exit-status table under "## Exit
// status" in page has a row whose first cell names every command, as
// "`"+prefix+name, and the Default command as "`"+cli.Name.
func ExitStatusRows(t *testing.T, page, prefix string) {
	t.Helper()
	_, table, ok := strings.Cut(page, "## Exit status\n")
	if !ok {
		t.Fatal("the page has no \"## Exit status\" section")
	}
	var rows []string
	for i, line := range strings.Split(strings.TrimLeft(table, "\n"), "\n") {
		if !strings.HasPrefix(line, "|") {
			break // the table's end
		}
		if cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |"); i > 1 {
			rows = append(rows, cell) // the first cell of a row, past the header and its rule
		}
	}
	all := strings.Join(rows, "\n")
	names := []string{}
	for _, n := range cli.Names() {
		names = append(names, prefix+n)
	}
	if cli.Default != nil {
		names = append(names, cli.Name)
	}
	for _, name := range names {
		if !regexp.MustCompile("`" + regexp.QuoteMeta(name) + "[` ]").MatchString(all) {
			t.Errorf("the exit-status table has no row for %s", name)
		}
	}
}

// HelpOneDefault checks that no flag's help states two defaults
// ("(default: estimated from the trace) (default 0)"), in any command.
func HelpOneDefault(t *testing.T) {
	t.Helper()
	two := regexp.MustCompile(`default.*\(default `)
	names := cli.Names()
	if cli.Default != nil {
		names = append(names, "")
	}
	for _, name := range names {
		args := []string{"-h"}
		if name != "" {
			args = []string{name, "-h"}
		}
		stdout, _, err := Run(t, args...)
		if err != nil {
			t.Errorf("%s -h: %v", name, err)
			continue
		}
		for _, line := range strings.Split(stdout, "\n") {
			if two.MatchString(line) {
				t.Errorf("%s %s -h: two defaults: %s", cli.Name, name, strings.TrimSpace(line))
			}
		}
	}
}

// MainEnv, set to 1, makes a binary's test binary act as the binary
// itself (its TestMain calls cli.Main), so that tests can run it as a
// child process: exit statuses, the whole standard error, the services a
// command starts as itself.
const MainEnv = "LATSCOPE_TEST_MAIN"

// RunExit runs the test binary as the binary (MainEnv) with args and
// returns its exit status and standard error.
func RunExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), MainEnv+"=1")
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

// OneLine checks that an error output is one line, and returns it
// trimmed.
func OneLine(t *testing.T, stderr string) string {
	t.Helper()
	s := strings.TrimSpace(stderr)
	if strings.Contains(s, "\n") {
		t.Errorf("error output is not one line:\n%s", s)
	}
	return s
}

// ListDir returns the names in dir, sorted, space-separated: what a
// failed write must leave as it was.
func ListDir(t *testing.T, dir string) string {
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
