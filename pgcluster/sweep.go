package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// owner identifies a process across PID reuse: its PID and its start time
// in clock ticks since boot (field 22 of /proc/<pid>/stat).
type owner struct {
	pid   int
	start string
}

// self is the calling process as an owner.
func self() owner {
	return owner{pid: os.Getpid(), start: startTicks(os.Getpid())}
}

// startTicks returns pid's start time from /proc, or "" if unknown.
func startTicks(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	fields, _, ok := statFields(b)
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if !ok || len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// alive reports whether the owner process still runs.
func (o owner) alive() bool {
	if !processAlive(o.pid) {
		return false
	}
	now := startTicks(o.pid)
	return o.start == "" || now == "" || now == o.start
}

// writeOwner records the calling process as the owner of dir.
func writeOwner(dir string) error {
	o := self()
	text := fmt.Sprintf("pid %d\nstart %s\n", o.pid, o.start)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(text), 0o644); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// readOwner parses dir's owner file.
func readOwner(dir string) (owner, error) {
	p := filepath.Join(dir, ownerFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return owner{}, err
	}
	var o owner
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch k {
		case "pid":
			o.pid, err = strconv.Atoi(v)
		case "start":
			o.start = v
		}
		if err != nil {
			return owner{}, fmt.Errorf("%s: bad pid %q: %w", p, v, err)
		}
	}
	if o.pid <= 0 {
		return owner{}, fmt.Errorf("%s: no pid", p)
	}
	return o, nil
}

// Sweep stops and removes clusters under os.TempDir() (directories named
// DirPrefix*) whose owner process is gone, such as those left by a crash or
// a kill -9. It skips directories it did not create as this OS user, those
// still being created, and those whose owner lives. It returns the removed
// directories; errors for single directories are joined.
func Sweep() (removed []string, err error) {
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), DirPrefix+"*"))
	if err != nil {
		return nil, fmt.Errorf("pgcluster: sweep: %w", err)
	}
	var errs []error
	for _, dir := range dirs {
		if !sweepable(dir) {
			continue
		}
		if err := killPostmaster(filepath.Join(dir, dataDir), killWait); err != nil {
			errs = append(errs, fmt.Errorf("pgcluster: sweep %s: %w", dir, err))
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("pgcluster: sweep: %w", err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// sweepable reports whether dir is a real directory whose owner file was
// written by this OS user and names a dead process.
func sweepable(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	ofi, err := os.Lstat(filepath.Join(dir, ownerFile))
	if err != nil || !ofi.Mode().IsRegular() {
		return false
	}
	if st, ok := ofi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	o, err := readOwner(dir)
	return err == nil && !o.alive()
}
