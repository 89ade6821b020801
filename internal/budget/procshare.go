package budget

import (
	"time"

	"github.com/latscope/latscope/internal/tracein"
)

// MinShareSpan is the least P running time between the first and the last
// CPU sample for which ProcCPUShare gives a share: 50 sample periods, so
// that the per-thread timers' loss at the two ends (SampleThreads periods
// at most) stays a small part of it on a trace of a few threads.
const MinShareSpan = 50 * CPUSamplePeriod

// ProfileGap and GapBusy find where a CPU profile stopped and started
// again inside the trace: two consecutive CPU samples more than
// ProfileGap apart while the Ps ran more than GapBusy (outside system
// calls) between them. ProcCPUShare leaves such a stretch out, as it
// leaves out the trace before the first sample and after the last. A
// thread that wants a CPU is not kept off one that long by CFS throttling
// (whose period is at most a second) or by other processes' share, and
// GapBusy is twenty periods of samples the Ps would have given at full
// share; a process stopped (SIGSTOP, a frozen cgroup) for longer than
// ProfileGap is left out the same way.
const (
	ProfileGap = time.Second
	GapBusy    = 20 * CPUSamplePeriod
)

// procShare measures, from the CPU samples, the CPU the Ps' threads had
// while Go counted the Ps running (TraceInfo.ProcCPUShare): the Ps'
// running time from the first sample to the last, less the time a P's
// goroutine sat in a system call (syscalls), the samples after the first
// that a thread holding a P took outside one, and the threads they came
// from.
type procShare struct {
	first, last         tracein.Time
	busyFirst, busyLast int64
	samples             int
	threads             map[int64]struct{}
	syscalls            procSyscalls
	gaps                int   // stretches without samples (ProfileGap)
	gapBusy             int64 // their running time
}

// procSyscalls is the time Ps were held by a goroutine in a system call: a
// P stays running in the trace while its goroutine is in one, until the
// call returns or another thread takes the P, though the thread is off
// the CPU by its own doing (a sleep, a blocking read, a cgo call), not
// waiting for one.
type procSyscalls struct {
	open pTimes // P → when its goroutine entered the call
	held int64  // Σ closed
}

// goState books a goroutine's transition into or out of a system call.
func (s *procSyscalls) goState(ev *tracein.Event, running bool) {
	switch {
	case ev.From == tracein.Running && ev.To == tracein.Syscall && ev.Proc >= 0 && running:
		s.open.put(ev.Proc, ev.Time)
	case ev.From == tracein.Syscall && ev.To != tracein.Syscall:
		s.release(ev.Proc, ev.Time)
	}
}

// release ends P's hold by a system call at t, if it had one.
func (s *procSyscalls) release(p int64, t tracein.Time) {
	if start, ok := s.open.take(p); ok {
		s.held += int64(t - start)
	}
}

// heldNow is the time Ps were held by system calls up to t.
func (s *procSyscalls) heldNow(t tracein.Time) int64 {
	return s.held + s.open.since(t)
}

// sample books a CPU sample at ev.Time: busy is the Ps' running time up
// to then, less their system calls'; inCall says the sample's goroutine
// was in a system call, whose time busy leaves out.
func (s *procShare) sample(ev *tracein.Event, busy int64, inCall bool) {
	switch {
	case s.threads == nil:
		s.threads = map[int64]struct{}{}
		s.first, s.busyFirst = ev.Time, busy
	case time.Duration(ev.Time-s.last) > ProfileGap && time.Duration(busy-s.busyLast) > GapBusy:
		s.gaps++ // the profiler was off: this sample starts a stretch, as the first did
		s.gapBusy += busy - s.busyLast
	case ev.Proc >= 0 && !inCall:
		s.samples++
		s.threads[ev.Thread] = struct{}{}
	}
	s.last, s.busyLast = ev.Time, busy
}

// busyNow is the Ps' running time up to t: the closed intervals and the
// open ones up to t.
func (a *Analyzer) busyNow(t tracein.Time) int64 {
	return a.procBusy + a.procs.since(t)
}

// shareBusy is busyNow less the time system calls held the Ps: the
// running time TraceInfo.BusyOutsideCalls is, up to t.
func (a *Analyzer) shareBusy(t tracein.Time) int64 {
	return a.busyNow(t) - a.share.syscalls.heldNow(t)
}

// ProcCPUShare is the CPU the Ps' threads had per second Go counted the Ps
// running, outside system calls, from the CPU samples (docs/method.md §6,
// "Running above CPU"): ProcSamples × CPUSamplePeriod / SampledBusy. Below
// 1 the threads waited for a CPU while their Ps ran — other processes, CFS
// throttling, more Ps than the CPUs the process may use, or the kernel
// keeping a runtime thread queued behind another on one core — and running
// time holds that wait. bound is how far the share may be off: each
// thread's profiling timer fires once per period of its own CPU, so its
// count misses less than a period at each end of the span, at most
// SampleThreads periods in all (a sample's period may fall partly outside
// it too), and as much again at each gap left out (ProfileGap). ok is
// false without MinShareSpan of sampled running time: no CPU profile ran,
// or too briefly.
func (i TraceInfo) ProcCPUShare() (share, bound float64, ok bool) {
	if i.SampledBusy < int64(MinShareSpan) || i.ProcSamples == 0 {
		return 0, 0, false
	}
	per := float64(CPUSamplePeriod) / float64(i.SampledBusy)
	return float64(i.ProcSamples) * per, float64(i.SampleThreads*(1+i.SampleGaps)) * per, true
}

// BusyOutsideCalls is the Ps' running time less the part a goroutine in a
// system call held them (ProcBusy − SyscallHeld): what the CPU-saturation
// findings judge, since such a P is handed on once others want it.
func (i TraceInfo) BusyOutsideCalls() int64 { return i.ProcBusy - i.SyscallHeld }
