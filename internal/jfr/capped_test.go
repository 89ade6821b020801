package jfr

import (
	"io"
	"strings"
	"testing"
)

// TestCappedThroughCopy: jfr print's standard error reaches capped by
// io.Copy (os/exec), which prefers a ReaderFrom; capped keeps maxStderr
// bytes whatever the path.
func TestCappedThroughCopy(t *testing.T) {
	t.Parallel()
	c := &capped{max: maxStderr}
	long := "Error: the first line\n" + strings.Repeat("x", 100000)
	n, err := io.Copy(c, strings.NewReader(long))
	if err != nil || n != int64(len(long)) {
		t.Fatalf("io.Copy = %d, %v; want all %d bytes taken", n, err, len(long))
	}
	if c.buf.Len() != maxStderr {
		t.Errorf("kept %d bytes, want %d", c.buf.Len(), maxStderr)
	}
	if got := c.firstLine(); got != "Error: the first line" {
		t.Errorf("firstLine = %q", got)
	}
}
