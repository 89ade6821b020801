package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := WriteString(p, "hello"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "hello" || st.Mode().Perm() != 0o644 {
		t.Errorf("got %q mode %v", b, st.Mode().Perm())
	}
	boom := errors.New("boom")
	if err := Write(filepath.Join(dir, "bad.txt"), func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("a failed write left files behind: %v", entries)
	}
}
