package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := WriteString(p, "hello"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "hello" || st.Mode().Perm() != 0o644 {
		t.Errorf("got %q mode %v", b, st.Mode().Perm())
	}
	boom := errors.New("boom")
	if err := Write(filepath.Join(dir, "bad.txt"), func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("a failed write left files behind: %v", entries)
	}
	if err := WriteString(p, "again"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "again" {
		t.Errorf("a regular file was not replaced: %q", b)
	}
}

// TestWriteRefusesNonRegular: an existing target that is not a regular file
// is left alone, with an error naming it (as root, a rename over /dev/full
// replaced the device node with a file).
func TestWriteRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("kept"), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	cases := []struct{ name, path, want string }{
		{"symlink", link, "a symbolic link"},
		{"fifo", fifo, "a FIFO"},
		{"directory", sub, "a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := WriteString(c.path, "new")
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %s as %s", err, c.path, c.want)
			}
			st, _ := os.Lstat(c.path)
			if st.Mode().IsRegular() {
				t.Errorf("%s was replaced by a regular file", c.path)
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "kept" {
		t.Errorf("the symlink's target was changed: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("refused writes left files behind: %v", entries)
	}
	// A device is checked without writing, so that a bug cannot replace it.
	if err := CheckTarget("/dev/null"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "/dev/null: it is a character device") {
		t.Errorf("CheckTarget(/dev/null) = %v", err)
	}
}

// TestSetAllOrNothing: when any member of a set fails, no target changes
// and no temporary file is left.
func TestSetAllOrNothing(t *testing.T) {
	boom := errors.New("boom")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	cases := []struct {
		name string
		add  func(s *Set, dir string)
		want string
	}{
		{"second write fails", func(s *Set, dir string) {
			s.Add(filepath.Join(dir, "a"), write("new"))
			s.Add(filepath.Join(dir, "b"), func(w io.Writer) error { io.WriteString(w, "x"); return boom })
		}, "boom"},
		{"second directory missing", func(s *Set, dir string) {
			s.Add(filepath.Join(dir, "a"), write("new"))
			s.Add(filepath.Join(dir, "missing", "b"), write("new"))
		}, "missing/b: no such file or directory"},
		{"second target not regular", func(s *Set, dir string) {
			s.Add(filepath.Join(dir, "a"), write("new"))
			s.Add(filepath.Join(dir, "d"), write("new"))
		}, "/d: it is a directory"},
		{"second target turns into a directory before the rename", func(s *Set, dir string) {
			s.Add(filepath.Join(dir, "a"), write("new"))
			s.Add(filepath.Join(dir, "c"), func(w io.Writer) error {
				io.WriteString(w, "new")
				return os.Mkdir(filepath.Join(dir, "c"), 0o755)
			})
		}, "/c: it is a directory"},
		{"same path twice", func(s *Set, dir string) {
			s.Add(filepath.Join(dir, "a"), write("new"))
			s.Add(filepath.Join(dir, ".", "a"), write("new"))
		}, "written twice"},
		{"an input", func(s *Set, dir string) {
			s.Inputs(filepath.Join(dir, "a"))
			s.Add(filepath.Join(dir, "b"), write("new"))
			s.Add(filepath.Join(dir, "a"), write("new"))
		}, "it is the input"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "a"), []byte("old"), 0o644)
			os.Mkdir(filepath.Join(dir, "d"), 0o755)
			var s Set
			c.add(&s, dir)
			err := s.Commit()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "old" {
				t.Errorf("a = %q after a failed commit, want old", b)
			}
			var names []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				names = append(names, e.Name())
			}
			want := "a d"
			if c.name == "second target turns into a directory before the rename" {
				want = "a c d"
			}
			if got := strings.Join(names, " "); got != want {
				t.Errorf("directory holds %q after a failed commit, want %q", got, want)
			}
		})
	}
	t.Run("success", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a"), []byte("old"), 0o644)
		var s Set
		s.Add(filepath.Join(dir, "a"), write("A"))
		s.Add(filepath.Join(dir, "b"), write("B"))
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"a": "A", "b": "B"} {
			if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
				t.Errorf("%s = %q, want %q", name, b, want)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("temporary or backup files left: %v", entries)
		}
	})
}

func TestNotInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.trace")
	os.WriteFile(in, []byte("trace"), 0o644)
	hard := filepath.Join(dir, "hard")
	os.Link(in, hard)
	other := filepath.Join(dir, "other")
	os.WriteFile(other, nil, 0o644)
	cases := []struct {
		out  string
		same bool
	}{
		{in, true},
		{filepath.Join(dir, ".", "t.trace"), true},
		{hard, true},
		{other, false},
		{filepath.Join(dir, "new"), false},
	}
	for _, c := range cases {
		err := NotInput(c.out, "-", in)
		if got := errors.Is(err, ErrIsInput); got != c.same {
			t.Errorf("NotInput(%s) = %v, want same=%v", c.out, err, c.same)
		}
	}
	if err := WriteString(hard, "x"); err != nil { // Write itself does not know the inputs
		t.Fatal(err)
	}
}

// TestSetDir: a directory the set creates is removed when the set fails.
func TestSetDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a", "b")
	var s Set
	s.Dir(out)
	s.Add(filepath.Join(out, "x"), func(w io.Writer) error { return errors.New("boom") })
	if err := s.Commit(); err == nil {
		t.Fatal("no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed commit left %v", entries)
	}
	s = Set{}
	s.Dir(out)
	s.Add(filepath.Join(out, "x"), func(w io.Writer) error { return nil })
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "x")); err != nil {
		t.Error(err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	s = Set{}
	s.Dir(file)
	s.Add(filepath.Join(file, "x"), func(w io.Writer) error { return nil })
	if err := s.Commit(); err == nil || !strings.Contains(err.Error(), file+" is not a directory") {
		t.Errorf("err = %v", err)
	}
}

// TestWriterPanics: a writer that panics is an error, and nothing of the set
// is left behind: no temporary file, no directory it created, the previous
// file untouched.
func TestWriterPanics(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.html")
	if err := os.WriteFile(keep, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	var s Set
	s.Add(keep, func(w io.Writer) error { _, err := io.WriteString(w, "after"); return err })
	s.Dir(filepath.Join(dir, "new"))
	s.Add(filepath.Join(dir, "new", "p.pb.gz"), func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		var xs []int
		_ = xs[-1+len(xs)] // index out of range
		return nil
	})
	err := s.Commit()
	if err == nil || !strings.Contains(err.Error(), "p.pb.gz") || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("Commit = %v, want an error naming the file and the panic", err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "before" {
		t.Errorf("keep.html = %q, want the previous file", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left behind: %v, want only keep.html", names)
	}
}
