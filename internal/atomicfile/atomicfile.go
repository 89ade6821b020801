// Package atomicfile writes files so that no reader ever sees a partial
// one: the data goes to a temporary file beside the target, which is
// renamed into place only when complete, and removed on any failure.
//
// Only regular files are ever replaced: an existing target that is a
// symbolic link, a device, a FIFO, a socket or a directory is refused with
// an error naming it (renaming over /dev/full as root would replace the
// device node with a file). A [Set] writes several files all or nothing,
// and [NotInput] checks that an output is not one of a command's inputs.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRegular is wrapped by the error for an existing target that is not
// a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrIsInput is wrapped by the error for an output that is one of the
// inputs.
var ErrIsInput = errors.New("output is an input")

// Write writes path through write with mode 0644: all of it, or, on any
// error (from write, the file system, or a target that is not a regular
// file), nothing, leaving a previous file at path untouched.
func Write(path string, write func(io.Writer) error) error {
	var s Set
	s.Add(path, write)
	return s.Commit()
}

// WriteString writes s to path.
func WriteString(path, s string) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, strings.NewReader(s))
		return err
	})
}

// CheckTarget returns an error naming path when path exists and is not a
// regular file (a symbolic link, device, FIFO, socket or directory), or
// when its existence cannot be checked. A path that does not exist is fine.
func CheckTarget(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, bare(err))
	}
	if st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("refusing to replace %s: it is %s, %w", path, kind(st.Mode()), ErrNotRegular)
}

// kind names a non-regular file type for errors.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// NotInput returns an error when output names the same file as one of
// inputs (os.SameFile, so links and other spellings of the path count).
// Inputs that cannot be examined (standard input "-", missing files) and
// an output that does not exist yet are never the same.
func NotInput(output string, inputs ...string) error {
	out, err := os.Stat(output)
	if err != nil {
		return nil
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		st, err := os.Stat(in)
		if err == nil && os.SameFile(out, st) {
			return fmt.Errorf("refusing to write %s: it is the input %s (%w)", output, in, ErrIsInput)
		}
	}
	return nil
}

// Set is a group of files written all or nothing: Add records each file,
// Commit checks every target, writes every temporary file, and only then
// renames them into place. The zero Set is empty and ready to use; a Set
// is used once.
type Set struct {
	files   []member
	inputs  []string
	dirs    []string // directories to create at Commit
	created []string // directories Commit created, outermost first
}

// member is one file of a Set.
type member struct {
	path   string
	write  func(io.Writer) error
	tmp    string // the written temporary file, until renamed
	backup string // a hard link to the previous file, while renaming
	placed bool   // renamed into place
}

// Add adds path, written by write, to the set. Nothing is written before
// Commit.
func (s *Set) Add(path string, write func(io.Writer) error) {
	s.files = append(s.files, member{path: path, write: write})
}

// Inputs records files that no member may replace (see [NotInput]);
// Commit refuses a member that is one of them.
func (s *Set) Inputs(paths ...string) { s.inputs = append(s.inputs, paths...) }

// Dir makes Commit create directory dir (and its parents) when missing,
// before writing the members in it; a failed Commit removes the
// directories it created.
func (s *Set) Dir(dir string) { s.dirs = append(s.dirs, dir) }

// Paths returns the paths added so far, in order.
func (s *Set) Paths() []string {
	var ps []string
	for _, m := range s.files {
		ps = append(ps, m.path)
	}
	return ps
}

// Check reports the first member that Commit would refuse before writing
// anything: a target that is not a regular file, one of the inputs, or a
// path added twice. Commit calls it; callers may call it early, before
// expensive work.
func (s *Set) Check() error {
	seen := map[string]bool{}
	for _, m := range s.files {
		clean := filepath.Clean(m.path)
		if seen[clean] {
			return fmt.Errorf("%s is written twice by the same command", m.path)
		}
		seen[clean] = true
		if err := checkParents(m.path); err != nil {
			return err
		}
		if err := CheckTarget(m.path); err != nil {
			return err
		}
		if err := NotInput(m.path, s.inputs...); err != nil {
			return err
		}
	}
	return nil
}

// Commit writes every member: first all temporary files (each beside its
// target, mode 0644, synced to disk), then renames them into place. On any
// error it removes the temporary files, puts back the files that the
// members replaced, and removes those it created, so that the targets are
// as they were; the error names the target.
func (s *Set) Commit() (err error) {
	if err := s.Check(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			s.rollback()
		} else {
			s.cleanup()
		}
	}()
	for _, d := range s.dirs {
		if err := s.mkdir(d); err != nil {
			return err
		}
	}
	for i := range s.files {
		if err := s.files[i].writeTemp(); err != nil {
			return err
		}
	}
	for i := range s.files {
		// The last rename cannot be undone by a later failure: no backup.
		if err := s.files[i].place(i < len(s.files)-1); err != nil {
			return err
		}
	}
	return nil
}

// checkParents refuses a member whose directory exists but is not one
// (a file "out" given as --pprof out, say), with an error naming it.
func checkParents(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	return nil
}

// mkdir creates dir and its missing parents, remembering which it created.
func (s *Set) mkdir(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil {
			return fmt.Errorf("cannot create directory %s: %w", dir, bare(err))
		}
		s.created = append(s.created, missing[i])
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("cannot create directory %s: a file of that name exists", dir)
	}
	return nil
}

// writeTemp writes m's temporary file.
func (m *member) writeTemp() error {
	f, err := os.CreateTemp(filepath.Dir(m.path), "."+filepath.Base(m.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", m.path, bare(err))
	}
	m.tmp = f.Name()
	err = m.safeWrite(f)
	if err == nil {
		err = f.Sync() // a full disk may only say so here or at Close
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(m.tmp, 0o644)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", m.path, bare(err))
	}
	return nil
}

// safeWrite calls m's writer; a panic in it is an error, so that Commit
// still removes what it wrote and created, and the caller reports it.
func (m *member) safeWrite(w io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in its writer (a bug; please report it): %v", r)
		}
	}()
	return m.write(w)
}

// place renames m's temporary file over its target. With backup, it keeps
// a hard link to the previous file until the whole set is in place.
func (m *member) place(backup bool) error {
	if err := CheckTarget(m.path); err != nil { // it may have changed since Check
		return err
	}
	if _, err := os.Lstat(m.path); err == nil && backup {
		b := m.tmp + ".old"
		if os.Link(m.path, b) == nil {
			m.backup = b
		}
	}
	if err := os.Rename(m.tmp, m.path); err != nil {
		return fmt.Errorf("cannot write %s: %w", m.path, bare(err))
	}
	m.tmp, m.placed = "", true
	return nil
}

// rollback undoes a failed Commit as far as the file system allows.
func (s *Set) rollback() {
	for i := range s.files {
		m := &s.files[i]
		if m.tmp != "" {
			os.Remove(m.tmp)
		}
		switch {
		case m.placed && m.backup != "":
			os.Rename(m.backup, m.path)
		case m.placed:
			os.Remove(m.path)
		case m.backup != "":
			os.Remove(m.backup)
		}
	}
	for i := len(s.created) - 1; i >= 0; i-- {
		os.Remove(s.created[i]) // only when empty: never another's files
	}
}

// cleanup removes the links to replaced files after a successful Commit.
func (s *Set) cleanup() {
	for _, m := range s.files {
		if m.backup != "" {
			os.Remove(m.backup)
		}
	}
}

// bare strips an *fs.PathError or *os.LinkError (not one wrapped inside
// another error) down to its cause, so that errors name the target rather
// than a temporary file.
func bare(err error) error {
	switch e := err.(type) {
	case *fs.PathError:
		return e.Err
	case *os.LinkError:
		return e.Err
	}
	return err
}
