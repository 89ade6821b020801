package main

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

// reportFile is the -o flag of a command that prints a report (analyze,
// compare, predict, dbwait, lab queues): the text, or the JSON with
// --json, goes to FILE instead of standard output, byte for byte what
// standard output would have shown. It is written through atomicfile, as every other output file
// is: a temporary file beside FILE, renamed into place once complete, so
// that a failure (a full disk, an interrupt) leaves no partial file and a
// previous FILE as it was.
type reportFile struct{ path string }

// register adds -o to fs.
func (r *reportFile) register(fs *flagSet) {
	fs.StringVar(&r.path, "o", "", "write the report (text, or JSON with --json) to `FILE` instead of standard output")
}

// check refuses, before the analysis (which may take long), an -o that
// could not be written: a directory, a file in a directory that does not
// exist, a target that is not a regular file, one of the inputs, or a path
// that another output of the command writes (others). Its error names the
// flag and is one line.
func (r *reportFile) check(inputs, others []string) error {
	if r.path == "" {
		return nil
	}
	if strings.HasSuffix(r.path, string(filepath.Separator)) {
		return fmt.Errorf("flag -o %s: want a file name, not a directory", r.path)
	}
	if st, err := os.Stat(r.path); err == nil && st.IsDir() {
		return fmt.Errorf("flag -o %s: is a directory; want a file name", r.path)
	}
	if _, err := os.Stat(filepath.Dir(r.path)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("flag -o %s: directory %s does not exist", r.path, filepath.Dir(r.path))
	}
	var s atomicfile.Set
	s.Inputs(inputs...)
	for _, p := range others {
		s.Add(p, nil)
	}
	s.Add(r.path, nil)
	if err := s.Check(); err != nil {
		return fmt.Errorf("flag -o: %w", err)
	}
	return nil
}

// write writes the report by write: to stdout without -o, else to the
// file, all of it or nothing.
func (r *reportFile) write(stdout io.Writer, write func(io.Writer) error) error {
	if r.path == "" {
		return write(stdout)
	}
	err := atomicfile.Write(r.path, func(w io.Writer) error { return write(reportOutput(w)) })
	if err != nil {
		return fmt.Errorf("flag -o: %w", err)
	}
	return nil
}

// reportOutput wraps the -o file's writer; tests make it fail (a full
// disk) to check that nothing is left behind.
var reportOutput = func(w io.Writer) io.Writer { return w }
