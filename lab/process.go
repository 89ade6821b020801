package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/latscope/latscope/hostsig"
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
// address there (which it does once it is ready).
func StartProcess(ctx context.Context, env *Env, name string, args ...string) (*Process, error) {
	addrFile := filepath.Join(env.Out, name+".addr")
	os.Remove(addrFile)
	cmd := env.Command(ctx, append(args, "--addr-file", addrFile)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	if err := cmd.Start(); err != nil {
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
