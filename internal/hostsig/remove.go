package hostsig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// removeTries bounds how often Remove moves tasks out and retries rmdir while processes in
// the cgroup are still forking.
const removeTries = 50

// Remove moves every task of the cgroup (and of any cgroup made inside it) to the cgroup's
// parent and deletes them. Removing a cgroup that is already gone is not an error.
func (c *Cgroup) Remove() error {
	var errs []error
	for _, dir := range c.dirs() {
		if err := removeTree(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", c.Name, err))
		}
	}
	return errors.Join(errs...)
}

// removeTree removes the cgroup dir and its children, deepest first, moving their tasks to
// the parent of dir.
func removeTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := removeCgroup(dirs[i], filepath.Dir(dir)); err != nil {
			return err
		}
	}
	return nil
}

func removeCgroup(dir, to string) error {
	var err error
	for range removeTries {
		if err = evacuate(dir, to); err != nil {
			return err
		}
		err = syscall.Rmdir(dir)
		switch {
		case err == nil || errors.Is(err, syscall.ENOENT):
			return nil
		case !errors.Is(err, syscall.EBUSY):
			return fmt.Errorf("rmdir %s: %w", dir, err)
		}
		time.Sleep(10 * time.Millisecond) // exiting tasks leave the cgroup a little later
	}
	return fmt.Errorf("rmdir %s: %w after %d tries", dir, err, removeTries)
}

// evacuate moves the processes, and then any stray v1 threads, of dir to the cgroup to.
func evacuate(dir, to string) error {
	for _, file := range []string{"cgroup.procs", "tasks"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone already, or no "tasks" file (v2)
		}
		if err != nil {
			return fmt.Errorf("list tasks: %w", err)
		}
		for _, id := range strings.Fields(string(b)) {
			err := writeCgroup(to, file, id)
			if err != nil && !errors.Is(err, syscall.ESRCH) {
				return err
			}
		}
	}
	return nil
}
