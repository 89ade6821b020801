package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, f) }
func (r *recorder) Fatalf(f string, a ...any) { r.errs = append(r.errs, f) }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.golden")
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nb\n"), true) // -update creates the file and its directory
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\n" || len(r.errs) > 0 {
		t.Fatalf("update: %q %v %v", b, err, r.errs)
	}
	Check(r, path, []byte("a\nc\n"), false)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "differs") {
		t.Fatalf("mismatch: failures %q", r.errs)
	}
	if b, err := os.ReadFile(path + ".got"); err != nil || string(b) != "a\nc\n" {
		t.Fatalf("mismatch: .got %q %v", b, err)
	}
	r.errs = nil
	Check(r, path, []byte("a\nb\n"), false)
	if _, err := os.Stat(path + ".got"); len(r.errs) > 0 || !os.IsNotExist(err) {
		t.Fatalf("match: failures %q, stale .got: %v", r.errs, err)
	}
	Check(r, path+".missing", []byte("x"), false)
	if len(r.errs) == 0 || !strings.Contains(r.errs[0], "-update") { // (a real Fatalf would stop there)
		t.Fatalf("missing file: failures %q", r.errs)
	}
}
