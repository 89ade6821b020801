package jvm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/latscope/latscope/lab"
)

// process is a JVM the lab runs: the service or the upstream.
type process struct {
	name string
	addr string
	cmd  *exec.Cmd
	done chan error
	out  *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the process's output and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// readyTimeout bounds a JVM's start-up (the service calibrates its CPU work
// and opens its pool first).
const readyTimeout = 60 * time.Second

// startJVM runs `java jvmArgs... latscopelab.JvmLab args... --addr-file F`
// as a child the kernel kills with the lab (lab.StartChild) and waits until
// it has written its address.
func startJVM(ctx context.Context, t *tools, dir, name string, jvmArgs, args []string) (*process, error) {
	addrFile := filepath.Join(dir, name+".addr")
	os.Remove(addrFile)
	all := append(append([]string{}, jvmArgs...), "-cp", t.classpath, "latscopelab.JvmLab")
	all = append(all, args...)
	all = append(all, "--addr-file", addrFile)
	cmd := exec.CommandContext(ctx, t.java, all...)
	out := &syncBuffer{}
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	w := io.MultiWriter(out, logf)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := lab.StartChild(cmd); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan error, 1), out: out}
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.done <- err
	}()
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(b), "\n") {
			p.addr = strings.TrimSpace(string(b))
			return p, nil
		}
		select {
		case err := <-p.done:
			return nil, fmt.Errorf("%s exited before it was ready (%v): %s", name, err, lastLine(out.String()))
		case <-deadline.C:
			p.stop()
			return nil, fmt.Errorf("%s did not become ready within %s: %s", name, readyTimeout, lastLine(out.String()))
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

func (p *process) pid() int    { return p.cmd.Process.Pid }
func (p *process) url() string { return "http://" + p.addr }

// stop ends the JVM with SIGTERM (SIGKILL after 10 s) and waits for it.
func (p *process) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
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

// jcmd runs `jcmd PID args...`; its output must not report a failure.
func jcmd(ctx context.Context, t *tools, pid int, args ...string) error {
	s, err := jcmdOutput(ctx, t, pid, args...)
	if err != nil {
		return err
	}
	// jcmd exits 0 when the command itself failed; its message says so.
	for _, bad := range []string{"Could not", "Exception", "rror"} {
		if strings.Contains(s, bad) {
			return fmt.Errorf("jcmd %d %s: %s", pid, strings.Join(args, " "), lastLine(s))
		}
	}
	return nil
}

// jcmdOutput runs `jcmd PID args...` and returns its output.
func jcmdOutput(ctx context.Context, t *tools, pid int, args ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, t.jcmd, append([]string{fmt.Sprint(pid)}, args...)...).CombinedOutput()
	s := strings.TrimSpace(string(out))
	if err != nil {
		return s, fmt.Errorf("jcmd %d %s: %w: %s", pid, strings.Join(args, " "), err, lastLine(s))
	}
	return s, nil
}

// ownStats are the service's own cumulative timings (GET /stats), in ns.
type ownStats struct {
	Requests      int64 `json:"requests"`
	TotalNs       int64 `json:"total_ns"`
	CPUNs         int64 `json:"cpu_ns"`
	UpstreamNs    int64 `json:"upstream_ns"`
	DBNs          int64 `json:"db_ns"`
	PoolNs        int64 `json:"pool_ns"`
	SharedNs      int64 `json:"shared_ns"`
	LockNs        int64 `json:"lock_ns"`
	AwaitNs       int64 `json:"await_ns"`
	BurstRequests int64 `json:"burst_requests"`
	BurstNs       int64 `json:"burst_ns"`
	BurstForks    int64 `json:"burst_forks"`
	// /lock: its requests, their wall time and thread CPU (ThreadMXBean,
	// with the sum of squares in µs² for the mean's spread), the wait for
	// the monitor, the hold and the hold's thread CPU (sum of squares too),
	// and the contended hand-offs (count, and the time from the release to
	// the next holder's start).
	LockRequests int64   `json:"lock_requests"`
	LockTotalNs  int64   `json:"lock_total_ns"`
	ReqCPUNs     int64   `json:"request_cpu_ns"`
	ReqCPUSq     float64 `json:"request_cpu_sq_us2"`
	LockWaitNs   int64   `json:"lock_wait_ns"`
	LockHoldNs   int64   `json:"lock_hold_ns"`
	LockCPUNs    int64   `json:"lock_cpu_ns"`
	LockCPUSq    float64 `json:"lock_cpu_sq_us2"`
	HandOffs     int64   `json:"hand_offs"`
	HandOffNs    int64   `json:"hand_off_ns"`
}

func (s ownStats) sub(o ownStats) ownStats {
	return ownStats{Requests: s.Requests - o.Requests, TotalNs: s.TotalNs - o.TotalNs, CPUNs: s.CPUNs - o.CPUNs, UpstreamNs: s.UpstreamNs - o.UpstreamNs,
		DBNs: s.DBNs - o.DBNs, PoolNs: s.PoolNs - o.PoolNs, SharedNs: s.SharedNs - o.SharedNs, LockNs: s.LockNs - o.LockNs, AwaitNs: s.AwaitNs - o.AwaitNs,
		BurstRequests: s.BurstRequests - o.BurstRequests, BurstNs: s.BurstNs - o.BurstNs, BurstForks: s.BurstForks - o.BurstForks,
		LockRequests: s.LockRequests - o.LockRequests, LockTotalNs: s.LockTotalNs - o.LockTotalNs, ReqCPUNs: s.ReqCPUNs - o.ReqCPUNs,
		ReqCPUSq: s.ReqCPUSq - o.ReqCPUSq, LockWaitNs: s.LockWaitNs - o.LockWaitNs, LockHoldNs: s.LockHoldNs - o.LockHoldNs,
		LockCPUNs: s.LockCPUNs - o.LockCPUNs, LockCPUSq: s.LockCPUSq - o.LockCPUSq, HandOffs: s.HandOffs - o.HandOffs, HandOffNs: s.HandOffNs - o.HandOffNs}
}

func getStats(ctx context.Context, base string) (ownStats, error) {
	var s ownStats
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, base+"/stats", nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, fmt.Errorf("service /stats: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return s, fmt.Errorf("service /stats: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("service /stats: status %d", resp.StatusCode)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("service /stats: %w", err)
	}
	return s, nil
}

// errNoJDK names what to install.
var errNoJDK = errors.New("the JVM lab needs a JDK 17 with java, javac, jcmd and jfr (Debian: apt-get install openjdk-17-jdk-headless)")
