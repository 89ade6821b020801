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
