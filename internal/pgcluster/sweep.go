package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/latscope/latscope/internal/pgcluster/proclife"
)

// writeOwner records the calling process as the owner of dir.
func writeOwner(dir string) error {
	if err := proclife.WriteOwner(filepath.Join(dir, ownerFile)); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
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
	gone, err := proclife.OwnerGone(filepath.Join(dir, ownerFile))
	return err == nil && gone
}
