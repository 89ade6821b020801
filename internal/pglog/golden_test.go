package pglog_test

import (
	"flag"
	"fmt"
	"github.com/latscope/latscope/internal/golden"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/pglog"
)

var update = flag.Bool("update", false, "capture testdata/postgres.jsonl from a real cluster and rewrite the golden files")

const (
	captureFile = "testdata/postgres.jsonl"
	goldenFile  = "testdata/postgres.golden"
)

// TestCapture checks the parse of a real jsonlog captured on this machine
// (regenerate with -update), against assertions and a golden dump.
func TestCapture(t *testing.T) {
	if *update {
		if err := os.WriteFile(captureFile, capture(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log, err := os.ReadFile(captureFile)
	if err != nil {
		t.Fatal(err)
	}
	entries, stmts := statementsOf(t, log)
	checkCapture(t, entries, stmts)
	compareGolden(t, goldenFile, dump(entries, stmts))
}

// dump renders entries and statements as reviewable text.
func dump(entries []pglog.Entry, stmts []pglog.Statement) string {
	var b strings.Builder
	b.WriteString("# entries: line pid severity phase duration name lock\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "%d pid=%d %s %s", e.LineNum, e.PID, e.Severity, e.Phase)
		if e.HasDuration {
			fmt.Fprintf(&b, " dur=%v", e.Duration)
		}
		if e.Name != "" {
			fmt.Fprintf(&b, " name=%s", e.Name)
		}
		if e.Lock != pglog.LockNone {
			fmt.Fprintf(&b, " lock=%s mode=%s wait=%v holders=%v", e.Lock, e.LockMode, e.LockWait, e.LockHolders)
		}
		if tp, ok := pglog.FindTraceParent(e.SQL); ok {
			fmt.Fprintf(&b, " tp=%s", tp)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n# statements\n")
	for _, s := range stmts {
		b.WriteString(s.String() + "\n")
	}
	return b.String()
}

// compareGolden compares got with the golden file, rewriting it under
// -update; a mismatch writes got to <golden>.got and names the first
// differing line.
func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	golden.Check(t, path, []byte(got), *update)
}
