// Package atomicfile writes files so that no reader ever sees a partial
// one: the data goes to a temporary file beside the target, which is
// renamed into place only when complete, and removed on any failure.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write writes path through write with mode 0644.
func Write(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// WriteString writes s to path.
func WriteString(path, s string) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, strings.NewReader(s))
		return err
	})
}
