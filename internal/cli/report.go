package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/latscope/latscope/internal/atomicfile"
)

// ReportFile is the -o flag of a command that prints a report (analyze,
// compare, predict, dbwait, lab queues): the text, or the JSON with
// --json, goes to FILE instead of standard output, byte for byte what
// standard output would have shown. It is written through atomicfile, as every other output file
// is: a temporary file beside FILE, renamed into place once complete, so
// that a failure (a full disk, an interrupt) leaves no partial file and a
// previous FILE as it was.
type ReportFile struct{ Path string }

// Register adds -o to fs.
func (r *ReportFile) Register(fs *FlagSet) {
	fs.StringVar(&r.Path, "o", "", "write the report (text, or JSON with --json) to `FILE` instead of standard output")
}

// Check refuses, before the analysis (which may take long), an -o that
// could not be written: a directory, a file in a directory that does not
// exist, a target that is not a regular file, one of the inputs, or a path
// that another output of the command writes (others). Its error names the
// flag and is one line.
func (r *ReportFile) Check(inputs, others []string) error {
	if r.Path == "" {
		return nil
	}
	if strings.HasSuffix(r.Path, string(filepath.Separator)) {
		return fmt.Errorf("flag -o %s: want a file name, not a directory", r.Path)
	}
	if st, err := os.Stat(r.Path); err == nil && st.IsDir() {
		return fmt.Errorf("flag -o %s: is a directory; want a file name", r.Path)
	}
	if _, err := os.Stat(filepath.Dir(r.Path)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("flag -o %s: directory %s does not exist", r.Path, filepath.Dir(r.Path))
	}
	var s atomicfile.Set
	s.Inputs(inputs...)
	for _, p := range others {
		s.Add(p, nil)
	}
	s.Add(r.Path, nil)
	if err := s.Check(); err != nil {
		return fmt.Errorf("flag -o: %w", err)
	}
	return nil
}

// Write writes the report by write: to stdout without -o, else to the
// file, all of it or nothing.
func (r *ReportFile) Write(stdout io.Writer, write func(io.Writer) error) error {
	if r.Path == "" {
		return write(stdout)
	}
	err := atomicfile.Write(r.Path, func(w io.Writer) error { return write(ReportOutput(w)) })
	if err != nil {
		return fmt.Errorf("flag -o: %w", err)
	}
	return nil
}

// ReportOutput wraps the -o file's writer; tests make it fail (a full
// disk) to check that nothing is left behind.
var ReportOutput = func(w io.Writer) io.Writer { return w }
