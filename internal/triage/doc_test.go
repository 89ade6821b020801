package triage

import (
	"os"
	"strings"
	"testing"
)

// TestDocPromQL checks that docs/triage.md gives the PromQL of the rules
// (the example's output: triagereport's TestDocExample).
func TestDocPromQL(t *testing.T) {
	doc, err := os.ReadFile("../../docs/triage.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"latscope_db_call_duration_seconds_bucket", "latscope_cfs_throttled_seconds_total", `db="no"`, "latscope_stall_seconds_total"} {
		if !strings.Contains(string(doc), q) {
			t.Errorf("docs/triage.md does not give the PromQL with %s", q)
		}
	}
}
