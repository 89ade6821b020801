package demotrace

import (
	"bytes"
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/latscope/latscope/internal/tier"
)

// failAfter accepts n bytes, then fails every write as a full disk does.
type failAfter struct {
	n   int
	buf bytes.Buffer
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.buf.Len()+len(p) > f.n {
		k := f.n - f.buf.Len()
		f.buf.Write(p[:k])
		return k, syscall.ENOSPC
	}
	return f.buf.Write(p)
}

// TestRecordReportsWriteErrors: runtime/trace drops its writer's errors, so
// Record must notice them itself (demo-trace exited 0
// having written a truncated trace on a full disk).
func TestRecordReportsWriteErrors(t *testing.T) {
	tier.Timing(t)
	if testing.Short() {
		t.Skip("-short: records a trace (about 1 s)")
	}
	for _, n := range []int{0, 100, 4096} {
		w := &failAfter{n: n}
		cfg := DefaultConfig
		cfg.Requests, cfg.Warmup = 4, 2
		_, err := Record(context.Background(), w, cfg)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("writer failing after %d bytes: err = %v, want ENOSPC", n, err)
		}
	}
	var ok bytes.Buffer
	cfg := DefaultConfig
	cfg.Requests, cfg.Warmup = 4, 2
	if _, err := Record(context.Background(), &ok, cfg); err != nil || ok.Len() == 0 {
		t.Errorf("a working writer: err = %v, %d bytes", err, ok.Len())
	}
}
