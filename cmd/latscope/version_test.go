package main

import (
	"errors"
	"fmt"
	"runtime/debug"
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
	got := versionText(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/latscope/latscope", Version: "v0.9.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "88acdfa"}, {Key: "vcs.time", Value: "2026-12-04T15:00:00Z"}, {Key: "vcs.modified", Value: "true"}}})
	want := "latscope v0.9.0\nmodule github.com/latscope/latscope\nrevision 88acdfa (2026-12-04T15:00:00Z), with uncommitted changes\ngo1.26.8\n"
	if got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
}

// TestExitStatus: 0 ran and all is well, 1 ran and a verdict failed, 2 a
// usage or input error — through the command wrapper too.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{inCommand("lab", verdictFailed("1 of 10 checks failed: x")), 1},
		{inCommand("analyze", errors.New("t.trace: offset 12: bad trace data")), 2},
		{fmt.Errorf("wrapped: %w", verdictFailed("miss")), 1},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("exitStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if code, _ := runExit(t, "analyze", "/nonexistent.trace"); code != 2 {
		t.Errorf("analyze of a missing file: exit %d, want 2", code)
	}
}
