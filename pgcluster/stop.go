package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Shutdown limits.
const (
	stopTimeout = 30 * time.Second // pg_ctl stop -t
	killWait    = 5 * time.Second  // wait after SIGQUIT, and again after SIGKILL
)

// Stop shuts the server down (pg_ctl stop -m fast, then signals if pg_ctl
// fails) and removes Dir. It succeeds when the server is already gone. It is
// idempotent and safe to call from several goroutines: the first call does
// the work and every call returns its result.
func (c *Cluster) Stop() error { return c.stop() }

// shutdown is the body of Stop.
func (c *Cluster) shutdown() error {
	var errs []error
	if err := c.stopServer(); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, fmt.Errorf("pgcluster: removing %s: %w", c.dir, err))
	}
	return errors.Join(errs...)
}

// stopServer stops the server if its postmaster.pid exists.
func (c *Cluster) stopServer() error {
	if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout+killWait)
	defer cancel()
	err := c.run.run(ctx, "pg_ctl stop "+c.data, "pg_ctl", "-D", c.data, "-m", "fast", "-w",
		"-t", strconv.Itoa(int(stopTimeout.Seconds())), "stop")
	if err == nil {
		return nil
	}
	if kerr := killPostmaster(c.data, killWait); kerr != nil {
		return errors.Join(err, kerr)
	}
	return nil
}

// killPostmaster ends the postmaster named by data/postmaster.pid, if that
// process is alive and really serves data: SIGQUIT (immediate shutdown),
// then SIGKILL if it lingers for wait.
func killPostmaster(data string, wait time.Duration) error {
	pid := postmasterPID(data)
	if pid <= 0 || !isPostmaster(pid, data) {
		return nil
	}
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGKILL} {
		if err := syscall.Kill(pid, sig); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return nil
			}
			return fmt.Errorf("pgcluster: signalling postmaster %d of %s: %w", pid, data, err)
		}
		if waitExit(pid, wait) {
			return nil
		}
	}
	return fmt.Errorf("pgcluster: postmaster %d of %s survived SIGKILL for %v", pid, data, wait)
}

// postmasterPID reads the first line of data/postmaster.pid; 0 if absent.
func postmasterPID(data string) int {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil {
		return 0
	}
	return pid
}

// isPostmaster reports whether pid's command line names data, so that a
// stale postmaster.pid never gets an unrelated process killed.
func isPostmaster(pid int, data string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	for arg := range bytes.SplitSeq(b, []byte{0}) {
		if string(arg) == data {
			return true
		}
	}
	return false
}

// waitExit polls until pid is gone (or a zombie) or wait passes.
func waitExit(pid int, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if !processAlive(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == syscall.EPERM // no /proc: EPERM still means it exists
	}
	_, state, _ := statFields(b)
	return state != "Z" && state != "X"
}

// statFields splits /proc/<pid>/stat after the parenthesised command name:
// it returns the fields from the state on, the state, and whether the format
// was recognised.
func statFields(b []byte) ([]string, string, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, "", false
	}
	var fields []string
	for f := range bytes.FieldsSeq(b[i+1:]) {
		fields = append(fields, string(f))
	}
	if len(fields) == 0 {
		return nil, "", false
	}
	return fields, fields[0], true
}
