package pglog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/latscope/latscope/internal/pglog"
)

// endless is a line that never ends; it cancels its context after n reads.
type endless struct {
	n      int
	cancel context.CancelFunc
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n--; e.n == 0 {
		e.cancel()
	}
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestReaderContext: a line without end is read until the context is
// done, and Next then says so.
func TestReaderContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := pglog.NewReaderOptions(&endless{n: 100, cancel: cancel}, pglog.Options{Context: ctx, MaxLineBytes: 1 << 10})
	if n := r.MaxLineBytes(); n != 1<<10 {
		t.Errorf("MaxLineBytes = %d, want the option's 1024", n)
	}
	_, err := r.Next()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next = %v, want context.Canceled", err)
	}
	if _, again := r.Next(); again != err {
		t.Errorf("second Next = %v, want the same error", again)
	}
}
