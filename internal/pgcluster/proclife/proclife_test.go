package proclife_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/pgcluster/proclife"
	"github.com/latscope/latscope/internal/tier"
)

const childEnv = "PROCLIFE_TEST_CHILD"

// TestMain makes the test binary, with childEnv set, a parent that starts
// `sleep 60` with proclife.Start from a goroutine locked to its OS thread
// which then exits (so that thread ends), waits until that thread is gone
// from /proc/self/task, prints the sleep's PID, and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "" {
		os.Exit(m.Run())
	}
	runtime.LockOSThread() // keep the main thread, which never exits, to main: the goroutine below gets another
	type started struct{ pid, tid int }
	ch := make(chan started)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		cmd := exec.Command("sleep", "60")
		if err := proclife.Start(cmd, syscall.SIGKILL); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		ch <- started{cmd.Process.Pid, syscall.Gettid()}
	}()
	s := <-ch
	// The thread's end is waited for, not slept for: on a busy host a
	// fixed sleep may print the PID while the thread still runs, and the
	// test would then not test what it says.
	task := fmt.Sprintf("/proc/self/task/%d", s.tid)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("error: the locked thread", s.tid, "still runs 30 s after its goroutine ended")
			os.Exit(1)
		}
	}
	pid := s.pid
	fmt.Println(pid)
	time.Sleep(time.Minute)
	os.Exit(1)
}

// TestChildDiesWithParent: the child outlives the exit of the thread that
// asked for it (proclife forks from its own thread) and dies when its
// parent is killed with SIGKILL.
func TestChildDiesWithParent(t *testing.T) {
	tier.Busy(t)
	if runtime.GOOS != "linux" {
		t.Skip("SKIP: the parent-death signal is Linux only")
	}
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), childEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("parent said %q", line)
	}
	if !proclife.Alive(pid) {
		t.Fatalf("the child %d died when the thread that asked for it ended", pid)
	}
	parent.Process.Kill()
	parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for proclife.Alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the child %d outlived its parent's SIGKILL by 5 s", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOwner(t *testing.T) {
	tier.Busy(t)
	dir := t.TempDir()
	me := filepath.Join(dir, "me")
	if err := proclife.WriteOwner(me); err != nil {
		t.Fatal(err)
	}
	if gone, err := proclife.OwnerGone(me); err != nil || gone {
		t.Errorf("OwnerGone(this process) = %v, %v", gone, err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(me)
	for name, text := range map[string]string{
		"dead":     fmt.Sprintf("pid %d\n", dead.Process.Pid),
		"reused":   strings.Replace(string(b), "start ", "start 1", 1), // our PID, another start time
		"garbage":  "pid x\n",
		"empty":    "",
		"negative": "pid -1\n",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		gone, err := proclife.OwnerGone(p)
		wantErr := name != "dead" && name != "reused"
		if (err != nil) != wantErr || (!wantErr && !gone) {
			t.Errorf("%s (%q): OwnerGone = %v, %v", name, text, gone, err)
		}
	}
	if _, err := proclife.OwnerGone(filepath.Join(dir, "absent")); err == nil {
		t.Error("OwnerGone of a missing file: no error")
	}
}

// TestAliveZombie: a child that has exited but is not yet reaped still has
// a /proc entry (and kill(pid, 0) still succeeds), but its state Z makes it
// not alive; once reaped it is gone.
func TestAliveZombie(t *testing.T) {
	tier.Busy(t)
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	for i := 0; proclife.Alive(pid); i++ {
		if i == 1000 {
			t.Fatalf("pid %d: still alive after exiting 10 s ago", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid)); err != nil {
		t.Skipf("SKIP: no /proc entry for the unreaped child %d: %v", pid, err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("kill(%d, 0) of a zombie: %v (want success: only the state tells)", pid, err)
	}
	cmd.Wait()
	if proclife.Alive(pid) {
		t.Errorf("pid %d: alive after it was reaped", pid)
	}
}
