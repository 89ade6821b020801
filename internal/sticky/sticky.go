// Package sticky keeps the first error of a writer whose caller ignores
// errors: runtime/trace and runtime/pprof drop the errors of the writer
// they are given, so a full disk would leave a cut trace or profile behind
// a successful exit.
package sticky

import (
	"io"
	"sync"
)

// Writer passes writes to W until one fails; it then refuses every write
// and Err returns that first error. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// New returns a Writer over w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer. A short write counts as an error.
func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	s.err = err
	return n, err
}

// Err returns the first write error, or nil.
func (s *Writer) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
