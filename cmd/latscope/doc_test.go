package main

import (
	"flag"
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
	for sub := range labSub {
		runCLI(t, "lab", sub, "-h")
		checkFlags(t, "lab "+sub, docs)
	}
}

func checkFlags(t *testing.T, name, docs string) {
	t.Helper()
	h := helps[name]
	if h == nil {
		t.Errorf("%s: no flag set recorded (does it use newFlagSet?)", name)
		return
	}
	h.fs.VisitAll(func(f *flag.Flag) {
		re := regexp.MustCompile(`(^|[^\w-])--?` + regexp.QuoteMeta(f.Name) + `\b`)
		if !re.MatchString(docs) {
			t.Errorf("%s: flag -%s is not documented in docs/", name, f.Name)
		}
	})
}
