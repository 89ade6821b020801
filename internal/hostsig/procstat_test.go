package hostsig

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig/internal/tier"
)

// TestParseProcStatLive parses the stat files of real processes: this one,
// and a child whose command name has spaces and ')' in it. The start time in
// ticks is the one the kernel wrote, and StartTime is that many ticks.
func TestParseProcStatLive(t *testing.T) {
	tier.Timing(t)
	hz, err := UserHZ()
	if err != nil {
		t.Skipf("SKIP: no clock tick rate on this machine: %v", err)
	}
	read := func(pid int) ProcStat {
		t.Helper()
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Skipf("SKIP: no /proc on this machine: %v", err)
		}
		p, err := ParseProcStat(b, hz)
		if err != nil {
			t.Fatalf("ParseProcStat(%q): %v", b, err)
		}
		return p
	}
	self := read(os.Getpid())
	// the state is the main thread's, which may sleep while another runs this
	if self.PID != os.Getpid() || (self.State != "R" && self.State != "S") || self.StartTicks == 0 || self.NumThreads < 1 {
		t.Errorf("/proc/self/stat: %+v", self)
	}
	if want := time.Duration(self.StartTicks) * time.Second / time.Duration(hz); self.StartTime != want {
		t.Errorf("StartTime %v, want %d ticks = %v", self.StartTime, self.StartTicks, want)
	}

	odd := filepath.Join(t.TempDir(), "a) (b c")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("SKIP: no sleep program: %v", err)
	}
	// cp writes the copy: a file this process held open for writing is
	// inherited by any child a parallel test forks meanwhile, and exec of
	// it then fails with "text file busy" (ETXTBSY).
	if out, err := exec.Command("cp", sleep, odd).CombinedOutput(); err != nil {
		t.Fatalf("cp %s: %v: %s", sleep, err, out)
	}
	cmd := exec.Command(odd, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var child ProcStat
	for range 200 { // until the child has exec'd: its name is the new program's
		if child = read(cmd.Process.Pid); child.Comm == "a) (b c" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if child.Comm != "a) (b c" || child.PID != cmd.Process.Pid || child.StartTicks < self.StartTicks {
		t.Errorf("child %q: %+v (this process started at tick %d)", odd, child, self.StartTicks)
	}
}
