// Package golden compares test output with golden files: the one helper
// behind every package's -update flag.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

// Check compares got with the file at path. With update it writes got
// there instead, creating the directory. On a mismatch it writes got to
// path+".got" and fails t with a unified diff; on a match it removes a
// stale .got.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		os.Remove(path + ".got")
		return
	}
	os.WriteFile(path+".got", got, 0o644)
	diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(string(want)), B: difflib.SplitLines(string(got)),
		FromFile: path, ToFile: path + ".got", Context: 2})
	t.Errorf("output differs from %s (go test -update accepts it):\n%s", path, diff)
}
