package main

import (
	"os"
	"testing"

	"github.com/latscope/latscope/internal/cli/clitest"
)

// TestDocsCoverCommands checks that docs/commands.md names every command
// and that every flag of every command is documented somewhere in docs/.
func TestDocsCoverCommands(t *testing.T) {
	index, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	clitest.DocsCoverCommands(t, clitest.Docs(t, "../../docs"), string(index), "")
}

// TestDocsExitStatus: the exit-status table of docs/commands.md has a row
// naming every command.
func TestDocsExitStatus(t *testing.T) {
	b, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	clitest.ExitStatusRows(t, string(b), "")
}
