package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/latscope/latscope/internal/capture"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/internal/pgcluster/proclife"
)

// Process is a service the lab runs as its own OS process.
type Process struct {
	Name string
	PID  int
	Addr string // host:port it listens on
	cmd  *exec.Cmd
	done chan error
	log  *bytes.Buffer
}

// URL returns the service's base URL ("http://host:port").
func (p *Process) URL() string { return "http://" + p.Addr }

// StartProcess runs `latscope args...` through env.Command with an extra
// --addr-file flag and waits until the process has written its listening
// address there (which it does once it is ready). The process is killed if
// the lab dies (StartChild).
func StartProcess(ctx context.Context, env *Env, name string, args ...string) (*Process, error) {
	addrFile := filepath.Join(env.Out, name+".addr")
	os.Remove(addrFile)
	cmd := env.Command(ctx, append(args, "--addr-file", addrFile)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	if err := StartChild(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, PID: cmd.Process.Pid, cmd: cmd, done: make(chan error, 1), log: &out}
	go func() { p.done <- cmd.Wait() }()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			p.Addr = strings.TrimSpace(string(b))
			return p, nil
		}
		select {
		case err := <-p.done:
			return nil, fmt.Errorf("%s exited before it was ready (%v): %s", name, err, lastLine(out.String()))
		case <-deadline.C:
			p.Stop()
			return nil, fmt.Errorf("%s did not become ready within 60 s: %s", name, lastLine(out.String()))
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// Stop ends the process with SIGTERM (SIGKILL after a grace period) and
// waits for it.
func (p *Process) Stop() error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() <= 0) {
			return fmt.Errorf("%s: %w: %s", p.Name, err, lastLine(p.log.String()))
		}
		return nil
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within 15 s after SIGTERM; killed", p.Name)
	}
}

// Output returns what the process printed so far.
func (p *Process) Output() string { return p.log.String() }

// CPU returns the process's utime+stime from /proc/PID/stat: the lab's
// independent CPU instrument (it shares nothing with the Go tracer).
func (p *Process) CPU() (time.Duration, error) { return ProcessCPU(p.PID) }

// ProcessCPU reads a process's utime+stime from /proc.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	hz, _ := hostsig.UserHZ()
	st, err := hostsig.ParseProcStat(b, hz)
	if err != nil {
		return 0, err
	}
	return st.CPU(), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "(no output)"
	}
	return s
}

// StartChild starts cmd so that the kernel kills it (SIGKILL) when the lab
// process dies, however it dies: a lab killed with SIGKILL leaves no service
// running. Every process the lab starts goes through it.
func StartChild(cmd *exec.Cmd) error { return proclife.Start(cmd, syscall.SIGKILL) }

// RunMarker is the file in a lab's output folder that names the running
// lab process; it is removed when the run ends. A folder that still has one
// whose process is gone belongs to a killed run.
const RunMarker = ".lab-running"

// MarkRunning writes the RunMarker into out and returns the function that
// removes it at the end of the run.
func MarkRunning(out string) (func(), error) {
	p := filepath.Join(out, RunMarker)
	if err := proclife.WriteOwner(p); err != nil {
		return nil, err
	}
	return func() { os.Remove(p) }, nil
}

// SweepLeftovers removes what killed labs left behind: the private
// PostgreSQL clusters whose owner process is gone (pgcluster.Sweep stops a
// server still running), the empty cgroups named CgroupPrefix*-PID of dead
// PIDs and, in each output folder under parent whose
// RunMarker names a dead process, the unfinished capture folders
// (*.partial) and the marker. Folders of live labs are not touched. It
// returns what it removed.
func SweepLeftovers(parent string) ([]string, error) {
	removed, err := pgcluster.Sweep()
	errs := []error{err}
	cgs, err := sweepCgroups()
	removed, errs = append(removed, cgs...), append(errs, err)
	markers, _ := filepath.Glob(filepath.Join(parent, "*", RunMarker))
	for _, m := range markers {
		if gone, err := proclife.OwnerGone(m); err != nil || !gone {
			continue
		}
		dir := filepath.Dir(m)
		partials, _ := filepath.Glob(filepath.Join(dir, "*"+capture.PartialSuffix))
		for _, p := range partials {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, p)
		}
		if err := os.Remove(m); err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// CgroupPrefix starts the name of every cgroup a lab scenario creates; the
// name ends in "-PID" of the lab process (as latscope-dbwait-1234).
const CgroupPrefix = "latscope-"

// sweepCgroups removes the cgroups named CgroupPrefix*-PID, in the v1 cpu
// and the v2 hierarchy, whose PID no longer runs. Removing a cgroup
// (rmdir) fails while a process is in it, so a cgroup in use is never
// lost. Only root creates them, so only root sweeps.
func sweepCgroups() ([]string, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, nil // no cgroups to speak of
	}
	mounts, err := hostsig.ParseMountinfo(b)
	if err != nil {
		return nil, nil
	}
	var removed []string
	var errs []error
	for _, v := range []hostsig.CgroupVersion{hostsig.CgroupV1, hostsig.CgroupV2} {
		root, err := hostsig.CgroupDir(mounts, v, "/")
		if err != nil {
			continue
		}
		dirs, _ := filepath.Glob(filepath.Join(root, CgroupPrefix+"*"))
		for _, d := range dirs {
			name := filepath.Base(d)
			pid, err := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
			if err != nil || pid <= 0 || proclife.Alive(pid) {
				continue
			}
			if err := os.Remove(d); err != nil {
				errs = append(errs, fmt.Errorf("cgroup %s: %w", d, err))
				continue
			}
			removed = append(removed, d)
		}
	}
	return removed, errors.Join(errs...)
}
