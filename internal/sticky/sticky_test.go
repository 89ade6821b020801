package sticky

import (
	"bytes"
	"errors"
	"os"
	"runtime/trace"
	"testing"
)

// failAfter fails every write past n bytes.
type failAfter struct {
	n   int
	buf bytes.Buffer
}

var errFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.buf.Len()+len(p) > f.n {
		return 0, errFull
	}
	return f.buf.Write(p)
}

// TestTraceWriteError: runtime/trace drops the error; the Writer keeps it.
func TestTraceWriteError(t *testing.T) {
	for _, n := range []int{0, 100, 4096} {
		w := New(&failAfter{n: n})
		if err := trace.Start(w); err != nil {
			t.Fatal(err)
		}
		for range 100 {
			trace.Log(t.Context(), "x", "some text to fill the buffers")
		}
		trace.Stop()
		if !errors.Is(w.Err(), errFull) {
			t.Errorf("fail after %d bytes: Err = %v", n, w.Err())
		}
	}
	// /dev/full, as a real device
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("SKIP: no /dev/full here: %v", err)
	}
	defer f.Close()
	w := New(f)
	if _, err := w.Write([]byte("x")); err == nil || w.Err() == nil {
		t.Errorf("/dev/full: write %v, Err %v", err, w.Err())
	}
}
