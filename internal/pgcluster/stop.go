package pgcluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/latscope/latscope/internal/pgcluster/proclife"
)

// Shutdown limits.
const (
	stopTimeout = 30 * time.Second // fast shutdown before an immediate one
	killWait    = 5 * time.Second  // wait after SIGQUIT, and again after SIGKILL
)

// Stop shuts the server down (fast shutdown, then immediate, then SIGKILL)
// and removes Dir. It succeeds when the server is already gone. It is
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

// stopServer ends the postmaster this process started, if it runs: SIGINT
// (fast shutdown: backends are ended, the pid file and shared memory
// removed), then SIGQUIT (immediate shutdown), then SIGKILL, each after
// the previous one had its time. The postmaster is our child and is not
// reaped before it exits, so its PID cannot name another process.
func (c *Cluster) stopServer() error {
	srv := c.srv.Load()
	if srv == nil {
		return nil
	}
	steps := []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGINT, stopTimeout}, {syscall.SIGQUIT, killWait}, {syscall.SIGKILL, killWait}}
	for _, st := range steps {
		select {
		case <-srv.exited:
			return nil
		default:
		}
		if err := srv.cmd.Process.Signal(st.sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("pgcluster: signalling postmaster %d of %s: %w", srv.cmd.Process.Pid, c.data, err)
		}
		select {
		case <-srv.exited:
			return nil
		case <-time.After(st.wait):
		}
	}
	return fmt.Errorf("pgcluster: postmaster %d of %s survived SIGKILL for %v", srv.cmd.Process.Pid, c.data, killWait)
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
		if !proclife.Alive(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}
