package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemovePartial: a leftover partial directory of a capture is removed;
// anything else of that name is refused, not deleted.
func TestRemovePartial(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, files ...string) string {
		p := filepath.Join(dir, name)
		os.Mkdir(p, 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(p, f), nil, 0o644)
		}
		return p
	}
	left := mk("left.partial", TraceFile, MetaFile)
	if err := removePartial(left); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); err == nil {
		t.Error("a capture's leftover was not removed")
	}
	mine := mk("mine.partial", TraceFile, "notes.txt")
	link := filepath.Join(dir, "link.partial")
	os.Symlink(mine, link)
	file := filepath.Join(dir, "file.partial")
	os.WriteFile(file, nil, 0o644)
	for _, p := range []string{mine, link, file} {
		if err := removePartial(p); err == nil || !strings.Contains(err.Error(), "is not a capture's partial directory") {
			t.Errorf("%s: err = %v", p, err)
		}
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
	if err := removePartial(filepath.Join(dir, "none.partial")); err != nil {
		t.Error(err)
	}
}
