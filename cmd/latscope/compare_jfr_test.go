package main

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/jfr/jfrtest"
)

// TestCompareJFR: compare reads JVM recordings as it reads Go traces: the
// kept Svc recordings before and after its cache section's hashing moved
// out of the lock, with a prediction judged against the second.
func TestCompareJFR(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	before, err := jfrtest.Kept("svc", dir)
	if err != nil {
		t.Fatal(err)
	}
	after, err := jfrtest.Kept("svc-fixed", dir)
	if err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runCLI(t, "compare", "--predict", "scale=Svc.updateCache:0.1", before, after)
	if err := ignoreMiss(err); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/order: before 963 requests", "scale=Svc.updateCache:0.1", "Svc.updateCache"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare of two recordings lacks %q:\n%s", want, stdout)
		}
	}
	if _, _, err := runCLI(t, "compare", before, "testdata/serial.trace"); err == nil {
		t.Error("compare of a recording with a Go trace of another service: no error")
	}
}
