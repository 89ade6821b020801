package agent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// errNotOurs is the error for a file named like a snapshot that the agent
// will not read, list, serve or delete: not a regular file (a symlink, a
// directory, a fifo), not owned by the process's effective uid, or with
// more than one link. See docs/security.md.
var errNotOurs = errors.New("agent: not a snapshot this process wrote")

// snapDir is the verified snapshot directory. Every operation goes through
// root (an open handle on the directory, openat-based), so replacing the
// directory's path after the check changes nothing.
type snapDir struct {
	path string
	root *os.Root
	uid  int
}

// openSnapDir creates the snapshot directory if it is missing (mode 0700),
// verifies it and opens it. private (the default directory, in the shared
// temp dir) also refuses group and other read and search permissions;
// otherwise only their write permission is refused. Either way the
// directory must be a real directory (not a symlink) owned by the
// effective uid. An unsafe directory is refused, never repaired: it may
// belong to someone else.
func openSnapDir(path string, private bool) (*snapDir, error) {
	uid := os.Geteuid()
	mkdir := os.MkdirAll
	if private {
		mkdir = os.Mkdir // its parent is the shared temp dir; create nothing else
	}
	if err := mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("agent: snapshot directory: %w", err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("agent: snapshot directory: %w", err)
	}
	if err := checkDir(path, info, uid, private); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("agent: snapshot directory: %w", err)
	}
	opened, err := root.Stat(".")
	if err == nil && !os.SameFile(info, opened) {
		err = errors.New("it was replaced while being opened")
	}
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("agent: snapshot directory %s: %w", path, err)
	}
	return &snapDir{path: path, root: root, uid: uid}, nil
}

// checkDir says what is wrong with the snapshot directory path, if
// anything; info is its Lstat.
func checkDir(path string, info fs.FileInfo, uid int, private bool) error {
	fix := "; remove it or set Options.Dir to a directory of this user (see docs/security.md)"
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("agent: snapshot directory %s is a symbolic link; give the directory itself%s", path, fix)
	case !info.IsDir():
		return fmt.Errorf("agent: snapshot directory %s is not a directory (%v)%s", path, info.Mode().Type(), fix)
	}
	if owner, ok := fileOwner(info); !ok || owner != uid {
		return fmt.Errorf("agent: snapshot directory %s is owned by uid %d, not by this process's uid %d: another user may have created it to plant files%s", path, owner, uid, fix)
	}
	bad, what := fs.FileMode(0o022), "group or others may write it"
	if private {
		bad, what = 0o077, "group or others may access it (the default directory must be 0700)"
	}
	if perm := info.Mode().Perm(); perm&bad != 0 {
		return fmt.Errorf("agent: snapshot directory %s has mode %04o: %s%s", path, perm, what, fix)
	}
	return nil
}

// fileOwner returns the owner of a file.
func fileOwner(info fs.FileInfo) (int, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}

// checkOurs reports errNotOurs unless info (an Lstat or an Fstat) is a
// regular file owned by uid with a single link.
func checkOurs(info fs.FileInfo, uid int) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is %v, not a regular file", errNotOurs, info.Name(), info.Mode().Type())
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return fmt.Errorf("%w: %s: no owner", errNotOurs, info.Name())
	case int(st.Uid) != uid:
		return fmt.Errorf("%w: %s is owned by uid %d", errNotOurs, info.Name(), st.Uid)
	case st.Nlink != 1:
		return fmt.Errorf("%w: %s has %d links", errNotOurs, info.Name(), st.Nlink)
	}
	return nil
}

// stat returns the Lstat of name if it is one of our snapshots.
func (d *snapDir) stat(name string) (fs.FileInfo, error) {
	info, err := d.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	return info, checkOurs(info, d.uid)
}

// open opens the snapshot name for reading: a regular file owned by the
// process, never through a symlink. The name is checked with Lstat, opened,
// and the open file must be the same file (os.SameFile) and pass the same
// check, so a swap between the two is refused. O_NONBLOCK keeps a fifo
// swapped in from blocking the open.
func (d *snapDir) open(name string) (*os.File, fs.FileInfo, error) {
	if !isSnapshotName(name) {
		return nil, nil, fmt.Errorf("%w: %q is not a snapshot name", errNotOurs, name)
	}
	before, err := d.stat(name)
	if err != nil {
		return nil, nil, err
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !os.SameFile(before, info) {
		err = fmt.Errorf("%w: %s was replaced while being opened", errNotOurs, name)
	}
	if err == nil {
		err = checkOurs(info, d.uid)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// list returns the snapshots, oldest first: the files with a snapshot name
// that pass checkOurs. Other files are skipped.
func (d *snapDir) list() ([]SnapshotFile, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	var out []SnapshotFile
	for _, e := range ents {
		if !isSnapshotName(e.Name()) {
			continue
		}
		info, err := d.stat(e.Name())
		if err != nil {
			continue // deleted meanwhile, or not ours
		}
		out = append(out, SnapshotFile{Name: e.Name(), Bytes: info.Size(), Time: info.ModTime()})
	}
	slices.SortFunc(out, func(a, b SnapshotFile) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// createTemp creates a new temporary file, mode 0600, for a snapshot being
// written, and returns it with its name in the directory.
func (d *snapDir) createTemp() (*os.File, string, error) {
	for range 10 {
		var b [8]byte
		rand.Read(b[:])
		name := strings.Replace(tempPattern, "*", hex.EncodeToString(b[:]), 1)
		f, err := d.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) // never follows a symlink
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("agent: no free temporary file name")
}

// remove deletes the file name if it is ours.
func (d *snapDir) remove(name string) error {
	if _, err := d.stat(name); err != nil {
		return err
	}
	return d.root.Remove(name)
}

// removeStaleTemps deletes our temporary files older than age (left by a
// process that died while writing).
func (d *snapDir) removeStaleTemps(age time.Duration) {
	f, err := d.root.Open(".")
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		if ok, _ := filepath.Match(tempPattern, n); !ok {
			continue
		}
		if info, err := d.stat(n); err == nil && time.Since(info.ModTime()) > age {
			d.root.Remove(n)
		}
	}
}

func (d *snapDir) close() error { return d.root.Close() }
