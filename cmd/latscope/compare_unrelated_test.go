package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"
)

// otherService sleeps in a function of its own; its requests are tasks
// named "request", as the demo service's are.
func otherService() { time.Sleep(2 * time.Millisecond) }

// TestCompareUnrelated: two traces of different programs whose request
// types share a name are compared with a warning that they do not look
// like the same service, in text and JSON.
func TestCompareUnrelated(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("cannot start the runtime tracer (another trace is running?): %v", err)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, task := trace.NewTask(context.Background(), "request")
			otherService()
			task.End()
		}()
	}
	wg.Wait()
	trace.Stop()
	other := filepath.Join(t.TempDir(), "other.trace")
	if err := os.WriteFile(other, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runCLI(t, "compare", "--predict", "overlap=callUpstream,queryDB", "testdata/serial.trace", other)
	if err := ignoreMiss(err); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "warning: the two traces share no application frame") || !strings.Contains(stdout, "otherService") {
		t.Errorf("compare of two programs gives no warning:\n%s", stdout)
	}
	stdout, _, err = runCLI(t, "compare", "--json", "testdata/serial.trace", other)
	if err != nil || !strings.Contains(stdout, `"warnings": [`) {
		t.Errorf("compare --json of two programs: err %v, no warnings:\n%.400s", err, stdout)
	}
	// The same program before and after: no warning.
	stdout, _, err = runCLI(t, "compare", "testdata/serial.trace", "testdata/serial.trace")
	if err != nil || strings.Contains(stdout, "warning") {
		t.Errorf("compare of a trace with itself: err %v, output:\n%s", err, stdout)
	}
}

// TestCompareDamagedHint: compare has no --partial; its error on a damaged
// trace does not offer one.
func TestCompareDamagedHint(t *testing.T) {
	data, err := os.ReadFile("testdata/serial.trace")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.trace")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, "compare", "testdata/serial.trace", cut)
	if err == nil || strings.Contains(err.Error(), "(--partial") || !strings.Contains(err.Error(), "analyze --partial") {
		t.Errorf("compare of a damaged trace: %v; want an error that does not offer compare a --partial", err)
	}
}
