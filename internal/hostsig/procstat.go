package hostsig

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// ProcStat is the part of /proc/PID/stat that says how much CPU a process used.
type ProcStat struct {
	PID        int
	Comm       string        // command name as the kernel keeps it (at most 15 bytes), without parentheses
	State      string        // R, S, D, Z, T, t, ...
	UTime      time.Duration // user CPU of all threads, live and exited; counter
	STime      time.Duration // system CPU of all threads, live and exited; counter
	NumThreads int           // gauge
	StartTime  time.Duration // start time after boot
	// StartTicks is the start time in clock ticks after boot, as the
	// kernel gives it: with the PID, it tells a process from a later one
	// that reuses the PID.
	StartTicks uint64
}

// CPU returns UTime+STime.
func (p ProcStat) CPU() time.Duration { return p.UTime + p.STime }

// Field numbers of /proc/PID/stat (proc(5), 1-based), counted from the state field (3).
const (
	statState      = 3
	statUTime      = 14
	statSTime      = 15
	statNumThreads = 20
	statStartTime  = 22
)

// ParseProcStat parses the contents of /proc/PID/stat; hz is the clock-tick rate (UserHZ).
// The command name may contain spaces and parentheses: it ends at the last ')'.
func ParseProcStat(b []byte, hz int) (ProcStat, error) {
	if hz <= 0 {
		return ProcStat{}, fmt.Errorf("parse /proc/PID/stat: clock tick rate %d", hz)
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return ProcStat{}, fmt.Errorf("parse /proc/PID/stat: no (comm) in %q", clip(b))
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return ProcStat{}, fmt.Errorf("parse /proc/PID/stat: pid: %w", err)
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < statStartTime-statState+1 {
		return ProcStat{}, fmt.Errorf("parse /proc/PID/stat: %d fields after comm, want at least %d", len(f), statStartTime-statState+1)
	}
	field := func(n int) []byte { return f[n-statState] }
	p := ProcStat{PID: pid, Comm: string(b[open+1 : end])}
	if len(field(statState)) != 1 {
		return ProcStat{}, fmt.Errorf("parse /proc/PID/stat: state %q", field(statState))
	}
	p.State = string(field(statState))
	var u, s, start uint64
	for _, x := range []struct {
		n   int
		dst *uint64
	}{{statUTime, &u}, {statSTime, &s}, {statStartTime, &start}} {
		if *x.dst, err = strconv.ParseUint(string(field(x.n)), 10, 64); err != nil {
			return ProcStat{}, fmt.Errorf("parse /proc/PID/stat: field %d: %w", x.n, err)
		}
	}
	if p.NumThreads, err = strconv.Atoi(string(field(statNumThreads))); err != nil || p.NumThreads < 0 {
		return ProcStat{}, fmt.Errorf("parse /proc/PID/stat: field %d: num_threads %q", statNumThreads, field(statNumThreads))
	}
	p.UTime, p.STime, p.StartTime, p.StartTicks = ticks(u, hz), ticks(s, hz), ticks(start, hz), start
	return p, nil
}

// clip shortens b for an error message.
func clip(b []byte) []byte {
	if len(b) > 60 {
		return b[:60]
	}
	return b
}
