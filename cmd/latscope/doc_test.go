package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsCoverCommands checks that docs/commands.md names every command
// and that every flag of every command is documented somewhere in docs/.
func TestDocsCoverCommands(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	docs := all.String()
	index, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range commandNames() {
		if !strings.Contains(string(index), "`"+name) {
			t.Errorf("docs/commands.md does not list the %s command", name)
		}
		if _, _, err := runCLI(t, name, "-h"); err != nil {
			t.Errorf("%s -h: %v", name, err)
			continue
		}
		checkFlags(t, name, docs)
	}
	for _, sub := range labSubNames() {
		checkFlags(t, "lab "+sub, docs)
	}
}

// checkFlags asks the command for its -h and checks that every flag of its
// flag set is documented in docs.
func checkFlags(t *testing.T, name, docs string) {
	t.Helper()
	err := commands[name].run(t.Context(), io.Discard, io.Discard, []string{"-h"})
	var h *helpRequest
	if !errors.As(err, &h) {
		t.Errorf("%s -h: %v, want a help request (does it use newFlagSet?)", name, err)
		return
	}
	h.fs.VisitAll(func(f *flag.Flag) {
		re := regexp.MustCompile(`(^|[^\w-])--?` + regexp.QuoteMeta(f.Name) + `\b`)
		if !re.MatchString(docs) {
			t.Errorf("%s: flag -%s is not documented in docs/", name, f.Name)
		}
	})
}

// TestDocsExitStatus: the exit-status table of docs/commands.md has a row
// naming every command and lab subcommand.
func TestDocsExitStatus(t *testing.T) {
	b, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## Exit status\n")
	if !ok {
		t.Fatal("docs/commands.md has no \"## Exit status\" section")
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
	names := commandNames()
	for _, sub := range labSubNames() {
		names = append(names, "lab "+sub)
	}
	for _, name := range names {
		if !regexp.MustCompile("`" + regexp.QuoteMeta(name) + "[` ]").MatchString(all) {
			t.Errorf("the exit-status table of docs/commands.md has no row for %s", name)
		}
	}
}
