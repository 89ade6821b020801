// Package kept gives tests traces that the real runtime recorded once and
// the repository keeps under the test package's testdata directory, so
// that a test on them is fast and gives the same result on any host.
// LATSCOPE_RETRACE=1 records them again:
//
//	LATSCOPE_RETRACE=1 go test -run TestName ./pkg/
package kept

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/latscope/latscope/internal/atomicfile"
)

// RetraceEnv is the environment variable that makes Trace record again.
const RetraceEnv = "LATSCOPE_RETRACE"

// Retrace reports whether this run records the kept files again.
func Retrace() bool { return os.Getenv(RetraceEnv) == "1" }

// mu keeps recordings one at a time: the runtime has one tracer.
var mu sync.Mutex

// Trace returns the path of testdata/NAME.trace in the calling test's
// package; with LATSCOPE_RETRACE=1, record writes it again first. A file
// that is not there fails the test with the command that records it.
func Trace(t testing.TB, name string, record func(w io.Writer) error) string {
	t.Helper()
	return File(t, name+".trace", record)
}

// File is Trace for any kept file: testdata/NAME.
func File(t testing.TB, name string, record func(w io.Writer) error) string {
	t.Helper()
	path := filepath.Join("testdata", name)
	if Retrace() {
		mu.Lock()
		defer mu.Unlock()
		var buf bytes.Buffer
		if err := record(&buf); err != nil {
			t.Fatalf("recording %s: %v", path, err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := atomicfile.WriteString(path, buf.String()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no kept file %s (%v): record it with %s=1 go test -run '%s' in this package", path, err, RetraceEnv, t.Name())
	}
	return path
}
