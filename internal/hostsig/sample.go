package hostsig

import (
	"fmt"
	"strconv"
	"time"
)

// Source names one kernel file (or set of files) a Sample reads.
type Source uint8

// The sources of a Sample.
const (
	SourceProcess   Source = iota // /proc/PID/stat: UTime, STime, Threads
	SourceSchedstat               // /proc/PID/task/*/schedstat: Run, Wait, Timeslices
	SourceThrottle                // cgroup cpu.stat: Periods, Throttled, ThrottledTime
	SourceCgroupPSI               // v2 cgroup cpu.pressure: CgroupSome, CgroupFull
	SourceSystemPSI               // /proc/pressure/cpu: SystemSome, SystemFull
	SourceSteal                   // /proc/stat: Steal, CPUs
	NumSources
)

var sourceNames = [...]string{
	SourceProcess: "proc", SourceSchedstat: "sched", SourceThrottle: "throttle",
	SourceCgroupPSI: "cgpsi", SourceSystemPSI: "psi", SourceSteal: "steal",
}

// String returns the short name used in the text encoding (no.<name>=...).
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "Source(" + strconv.Itoa(int(s)) + ")"
}

// Sample is one reading of the host signals of a process. All durations except Mono are
// cumulative counters; only differences of two samples (Diff) are meaningful. A source that
// could not be read has a non-empty Absent entry and zero fields; zero is never a stand-in.
type Sample struct {
	Mono time.Duration // CLOCK_MONOTONIC when reading began: the Go execution-trace clock
	Wall time.Time     // wall clock when reading began
	PID  int

	// CgroupPath is the process's cgroup in the hierarchy of the cpu controller ("/" only when
	// the process is in the root cgroup); CgroupV2Path is its v2 cgroup, "" when none.
	CgroupPath, CgroupV2Path string

	UTime, STime time.Duration // SourceProcess: user and system CPU of the process
	Threads      int           // SourceProcess: thread count (a gauge, not in Delta)

	Run, Wait  time.Duration // SourceSchedstat: on-CPU and run-queue time summed over threads
	Timeslices uint64        // SourceSchedstat

	// SourceThrottle, summed over the process's cgroup and its ancestors (except the root),
	// so that a parent's quota shows too. CgroupVersion is the hierarchy it came from.
	CgroupVersion      CgroupVersion
	Periods, Throttled uint64
	ThrottledTime      time.Duration

	CgroupSome, CgroupFull time.Duration // SourceCgroupPSI: stall totals of the v2 cgroup
	SystemSome, SystemFull time.Duration // SourceSystemPSI: stall totals of the machine
	Steal                  time.Duration // SourceSteal: steal of all CPUs
	// CPUs is the number of CPUs Steal is summed over: the cpuN lines of /proc/stat (online
	// CPUs, a gauge). 0 means unknown: samples recorded before it was kept have none, and
	// with SourceSteal it is never a stand-in for a real count.
	CPUs int

	Absent [NumSources]string // per source: why it is missing; "" when it was read
}

// Has tells whether source src was read.
func (s Sample) Has(src Source) bool { return s.Absent[src] == "" }

// CPU returns UTime+STime.
func (s Sample) CPU() time.Duration { return s.UTime + s.STime }

// Delta is what happened between two samples of one process: counter increments only.
// A source is absent when it is absent in either sample, when its cgroup changed in
// between, or when one of its counters went backwards.
type Delta struct {
	Start    time.Duration // Mono of the earlier sample
	Interval time.Duration // Mono difference
	PID      int

	UTime, STime, Run, Wait time.Duration
	Timeslices              uint64
	Periods, Throttled      uint64
	ThrottledTime           time.Duration
	CgroupSome, CgroupFull  time.Duration
	SystemSome, SystemFull  time.Duration
	Steal                   time.Duration
	// CPUs is the number of CPUs Steal is summed over, the larger of the two samples'
	// counts (so that steal per CPU is never overstated when CPUs came online in between);
	// 0 when either sample lacks it or SourceSteal is absent.
	CPUs int

	Absent [NumSources]string
}

// Has tells whether source src has a valid increment.
func (d Delta) Has(src Source) bool { return d.Absent[src] == "" }

// CPU returns the process CPU used in the interval, UTime+STime.
func (d Delta) CPU() time.Duration { return d.UTime + d.STime }

// Diff returns the counter increments from sample a to the later sample b.
func Diff(a, b Sample) Delta {
	d := Delta{Start: a.Mono, Interval: b.Mono - a.Mono, PID: b.PID}
	for src := range NumSources {
		d.Absent[src] = pairAbsent(a, b, src)
	}
	d.UTime, d.STime = d.dur(SourceProcess, a.UTime, b.UTime), d.dur(SourceProcess, a.STime, b.STime)
	d.Run, d.Wait = d.dur(SourceSchedstat, a.Run, b.Run), d.dur(SourceSchedstat, a.Wait, b.Wait)
	d.Timeslices = d.count(SourceSchedstat, a.Timeslices, b.Timeslices)
	d.Periods = d.count(SourceThrottle, a.Periods, b.Periods)
	d.Throttled = d.count(SourceThrottle, a.Throttled, b.Throttled)
	d.ThrottledTime = d.dur(SourceThrottle, a.ThrottledTime, b.ThrottledTime)
	d.CgroupSome = d.dur(SourceCgroupPSI, a.CgroupSome, b.CgroupSome)
	d.CgroupFull = d.dur(SourceCgroupPSI, a.CgroupFull, b.CgroupFull)
	d.SystemSome = d.dur(SourceSystemPSI, a.SystemSome, b.SystemSome)
	d.SystemFull = d.dur(SourceSystemPSI, a.SystemFull, b.SystemFull)
	d.Steal = d.dur(SourceSteal, a.Steal, b.Steal)
	if a.CPUs > 0 && b.CPUs > 0 {
		d.CPUs = max(a.CPUs, b.CPUs)
	}
	d.clearAbsent()
	return d
}

// pairAbsent says why src has no increment from a to b, or "".
func pairAbsent(a, b Sample, src Source) string {
	switch {
	case a.PID != b.PID:
		return fmt.Sprintf("samples of different processes (%d, %d)", a.PID, b.PID)
	case b.Mono < a.Mono:
		return "samples out of order"
	case a.Absent[src] != "":
		return a.Absent[src]
	case b.Absent[src] != "":
		return b.Absent[src]
	case src == SourceThrottle && (a.CgroupPath != b.CgroupPath || a.CgroupVersion != b.CgroupVersion):
		return fmt.Sprintf("cgroup changed from %s to %s", a.CgroupPath, b.CgroupPath)
	case src == SourceCgroupPSI && a.CgroupV2Path != b.CgroupV2Path:
		return fmt.Sprintf("v2 cgroup changed from %s to %s", a.CgroupV2Path, b.CgroupV2Path)
	}
	return ""
}

func (d *Delta) dur(src Source, a, b time.Duration) time.Duration {
	if d.Absent[src] != "" {
		return 0
	}
	if b < a {
		d.Absent[src] = fmt.Sprintf("counter went backwards (%d to %d ns)", a, b)
		return 0
	}
	return b - a
}

func (d *Delta) count(src Source, a, b uint64) uint64 {
	if d.Absent[src] != "" {
		return 0
	}
	if b < a {
		d.Absent[src] = fmt.Sprintf("counter went backwards (%d to %d)", a, b)
		return 0
	}
	return b - a
}

// clearAbsent zeroes the fields of absent sources, some of which may have been set before
// a later counter of the same source went backwards.
func (d *Delta) clearAbsent() {
	if !d.Has(SourceProcess) {
		d.UTime, d.STime = 0, 0
	}
	if !d.Has(SourceSchedstat) {
		d.Run, d.Wait, d.Timeslices = 0, 0, 0
	}
	if !d.Has(SourceThrottle) {
		d.Periods, d.Throttled, d.ThrottledTime = 0, 0, 0
	}
	if !d.Has(SourceCgroupPSI) {
		d.CgroupSome, d.CgroupFull = 0, 0
	}
	if !d.Has(SourceSystemPSI) {
		d.SystemSome, d.SystemFull = 0, 0
	}
	if !d.Has(SourceSteal) {
		d.Steal, d.CPUs = 0, 0
	}
}
