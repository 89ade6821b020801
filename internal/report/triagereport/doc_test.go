package triagereport

import (
	"os"
	"strings"
	"testing"
)

// TestDocExample checks that docs/triage.md shows the real output of the
// local example (the golden file of TestGoldens) verbatim.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/triage.md")
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
}
