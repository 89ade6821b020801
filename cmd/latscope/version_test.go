package main

import (
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	stdout, _, err := runCLI(t, "version")
	if err != nil || !strings.HasPrefix(stdout, "latscope ") || !strings.Contains(stdout, "\ngo1.") {
		t.Errorf("version: %v\n%s", err, stdout)
	}
	if _, _, err := runCLI(t, "version", "extra"); err == nil {
		t.Error("version extra: no error")
	}
}

// TestExitStatus: 0 ran and all is well, 1 ran and a verdict failed, 2 a
// usage or input error — through the command wrapper too.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	if code, _ := runExit(t, "analyze", "/nonexistent.trace"); code != 2 {
		t.Errorf("analyze of a missing file: exit %d, want 2", code)
	}
}
