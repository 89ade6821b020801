package hostsig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Schedstat is /proc/PID/task/TID/schedstat: how long a thread ran and how long it was
// runnable but waiting for a CPU. Wait includes time the thread's cgroup was CFS-throttled.
// All three are counters.
type Schedstat struct {
	Run        time.Duration // time on a CPU
	Wait       time.Duration // time runnable on a run queue, not running
	Timeslices uint64        // number of times the thread ran on a CPU
}

// Add returns the field-wise sum.
func (s Schedstat) Add(o Schedstat) Schedstat {
	return Schedstat{s.Run + o.Run, s.Wait + o.Wait, s.Timeslices + o.Timeslices}
}

// ParseSchedstat parses a schedstat file: three decimal numbers, run and wait in
// nanoseconds, then the count of timeslices.
func ParseSchedstat(b []byte) (Schedstat, error) {
	f := bytes.Fields(b)
	if len(f) != 3 {
		return Schedstat{}, fmt.Errorf("parse schedstat: %d fields, want 3", len(f))
	}
	var v [3]uint64
	for i := range v {
		n, err := strconv.ParseUint(string(f[i]), 10, 64)
		if err != nil {
			return Schedstat{}, fmt.Errorf("parse schedstat: field %d: %w", i+1, err)
		}
		v[i] = n
	}
	return Schedstat{scaled(v[0], time.Nanosecond), scaled(v[1], time.Nanosecond), v[2]}, nil
}

// SumThreads reads /proc/PID/task/*/schedstat under procRoot (normally "/proc") and returns
// the sum over the threads alive now, with their count. Threads that exit between the
// listing and the read are skipped. Exited threads are not in the sum at all, so the sum may
// drop between calls; Sampler keeps a monotonic sum instead.
func SumThreads(procRoot string, pid int) (Schedstat, int, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Schedstat{}, 0, fmt.Errorf("list threads: %w", err)
	}
	var sum Schedstat
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if Gone(err) {
			continue
		}
		if err != nil {
			return Schedstat{}, 0, fmt.Errorf("read thread schedstat: %w", err)
		}
		s, err := ParseSchedstat(b)
		if err != nil {
			return Schedstat{}, 0, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name(), "schedstat"), err)
		}
		sum, n = sum.Add(s), n+1
	}
	return sum, n, nil
}

// Gone tells whether err, from reading a /proc file, means the thread
// or process has exited.
func Gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}
