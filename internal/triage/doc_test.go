package triage

import (
	"os"
	"strings"
	"testing"
)

// TestDocExample checks that docs/triage.md shows the real output of the
// local example (the golden file of the real-Prometheus test) verbatim.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/triage.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/local.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), string(want)) {
		t.Error("docs/triage.md does not show testdata/local.txt verbatim; paste it into the example")
	}
	for _, q := range []string{"latscope_db_call_duration_seconds_bucket", "latscope_cfs_throttled_seconds_total", `db="no"`, "latscope_stall_seconds_total"} {
		if !strings.Contains(string(doc), q) {
			t.Errorf("docs/triage.md does not give the PromQL with %s", q)
		}
	}
}
