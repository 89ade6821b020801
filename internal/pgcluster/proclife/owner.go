package proclife

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/latscope/latscope/internal/hostsig"
)

// owner identifies a process across PID reuse: its PID and its start time
// in clock ticks since boot (field 22 of /proc/<pid>/stat).
type owner struct {
	pid   int
	start string
}

// WriteOwner writes, at path, a file naming the calling process.
func WriteOwner(path string) error {
	pid := os.Getpid()
	text := fmt.Sprintf("pid %d\nstart %s\n", pid, startTicks(pid))
	return os.WriteFile(path, []byte(text), 0o644)
}

// OwnerGone reports whether the process named by the owner file at path no
// longer runs (a process with the same PID but another start time is a
// different process). An unreadable or malformed file is an error.
func OwnerGone(path string) (bool, error) {
	o, err := readOwner(path)
	if err != nil {
		return false, err
	}
	return !o.alive(), nil
}

// readOwner parses an owner file.
func readOwner(path string) (owner, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return owner{}, err
	}
	var o owner
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch k {
		case "pid":
			o.pid, err = strconv.Atoi(v)
		case "start":
			o.start = v
		}
		if err != nil {
			return owner{}, fmt.Errorf("%s: bad pid %q: %w", path, v, err)
		}
	}
	if o.pid <= 0 {
		return owner{}, fmt.Errorf("%s: no pid", path)
	}
	return o, nil
}

// alive reports whether the owner process still runs.
func (o owner) alive() bool {
	if !Alive(o.pid) {
		return false
	}
	now := startTicks(o.pid)
	return o.start == "" || now == "" || now == o.start
}

// startTicks returns pid's start time in clock ticks from /proc, or "" if
// unknown.
func startTicks(pid int) string {
	st, ok := procStat(pid)
	if !ok {
		return ""
	}
	return strconv.FormatUint(st.StartTicks, 10)
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	st, ok := procStat(pid)
	if !ok {
		err := syscall.Kill(pid, 0) // no /proc: ask the kernel; EPERM still means it exists
		return err == nil || err == syscall.EPERM
	}
	return st.State != "Z" && st.State != "X"
}

// procStat reads pid's /proc/PID/stat (hostsig's parser, the one every
// part of latscope uses).
func procStat(pid int) (hostsig.ProcStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return hostsig.ProcStat{}, false
	}
	// Only the state and the start time in ticks are used, not durations,
	// so any tick rate will do.
	st, err := hostsig.ParseProcStat(b, hostsig.DefaultUserHZ)
	return st, err == nil
}
