package dbwait_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
)

// TestPGLogLongLineSkipped (issue 29, item 12): a valid line over the
// reader's 16 MiB limit (a huge statement) is skipped with a warning that
// counts such lines and names the first one's offset; the rest of the log
// is read and joined.
func TestPGLogLongLineSkipped(t *testing.T) {
	c := loadCapture(t, "pause")
	want := analyse(t, "pause", dbwait.Options{})
	cut := bytes.IndexByte(c.pglog, '\n') + 1
	huge := fmt.Appendf(nil, `{"timestamp":"2026-12-02 17:13:26.216 UTC","pid":1768,"error_severity":"LOG","message":"duration: 1.0 ms  statement: SELECT '%s'"}`+"\n",
		strings.Repeat("y", pglog.DefaultMaxLineBytes))
	log := append(append(append([]byte(nil), c.pglog[:cut]...), huge...), c.pglog[cut:]...)
	log = append(log, huge...)
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "pause.trace", c.trace)
	if err := dbwait.FeedPGLog(a, pglog.NewReader(bytes.NewReader(log))); err != nil {
		t.Fatalf("a line over the limit refused the log: %v", err)
	}
	res, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != len(want.Queries) {
		t.Errorf("%d queries joined, want %d", len(res.Queries), len(want.Queries))
	}
	var found bool
	for _, w := range res.Warnings {
		if s := w.Error(); strings.Contains(s, "2 lines over 16 MiB skipped") && strings.Contains(s, fmt.Sprintf("first at byte offset %d", cut)) {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning counting the 2 long lines and naming offset %d in %q", cut, res.Warnings)
	}
}
