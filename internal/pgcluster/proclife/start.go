package proclife

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// forkReq is one command for the forking goroutine.
type forkReq struct {
	cmd  *exec.Cmd
	sig  syscall.Signal
	done chan error
}

var (
	forkOnce sync.Once
	forkCh   chan forkReq
)

// Start starts cmd so that it receives sig when the calling process dies,
// however it dies (on Linux; elsewhere it is cmd.Start). It keeps the rest
// of cmd.SysProcAttr. The signal is not inherited by cmd's own children, and
// the kernel clears it when cmd executes a set-user-ID program: start such
// tools with SysProcAttr.Credential instead.
func Start(cmd *exec.Cmd, sig syscall.Signal) error {
	if !supported {
		return cmd.Start()
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setDeathSignal(cmd.SysProcAttr, sig)
	forkOnce.Do(func() {
		forkCh = make(chan forkReq)
		go forker()
	})
	req := forkReq{cmd: cmd, sig: sig, done: make(chan error, 1)}
	forkCh <- req
	return <-req.done
}

// forker runs every fork on one OS thread that stays for the life of the
// process: the goroutine is locked to its thread and never returns, so the
// thread never exits and never fires a child's parent-death signal early.
func forker() {
	runtime.LockOSThread()
	for req := range forkCh {
		req.done <- req.cmd.Start()
	}
}
