package budget

import "github.com/latscope/latscope/internal/tracein"

// MinShareSpan is the least P running time between the first and the last
// CPU sample for which ProcCPUShare gives a share: 50 sample periods, so
// that the per-thread timers' loss at the two ends (SampleThreads periods
// at most) stays a small part of it on a trace of a few threads.
const MinShareSpan = 50 * CPUSamplePeriod

// procShare measures, from the CPU samples, the CPU the Ps' threads had
// while Go counted the Ps running (TraceInfo.ProcCPUShare): the Ps'
// running time from the first sample to the last, the samples after the
// first that a thread holding a P took, and the threads they came from.
type procShare struct {
	first, last         tracein.Time
	busyFirst, busyLast int64
	samples             int
	threads             map[int64]struct{}
}

// sample books a CPU sample at ev.Time: busy is the Ps' running time up
// to then.
func (s *procShare) sample(ev *tracein.Event, busy int64) {
	if s.threads == nil {
		s.threads = map[int64]struct{}{}
		s.first, s.busyFirst = ev.Time, busy
	} else if ev.Proc >= 0 {
		s.samples++
		s.threads[ev.Thread] = struct{}{}
	}
	s.last, s.busyLast = ev.Time, busy
}

// busyNow is the Ps' running time up to t: the closed intervals and the
// open ones up to t.
func (a *Analyzer) busyNow(t tracein.Time) int64 {
	busy := a.procBusy
	for _, start := range a.procs {
		busy += int64(t - start)
	}
	return busy
}

// ProcCPUShare is the CPU the Ps' threads had per second Go counted the Ps
// running, from the CPU samples (docs/method.md §6, "Running above CPU"):
// ProcSamples × CPUSamplePeriod / SampledBusy. Below 1 the threads waited
// for a CPU while their Ps ran — other processes, CFS throttling, or the
// kernel keeping a runtime thread queued behind another on one core — and
// running time holds that wait. bound is how far the share may be off:
// each thread's profiling timer fires once per period of its own CPU, so
// its count misses less than a period at each end of the span, at most
// SampleThreads periods in all (a sample's period may fall partly outside
// it too). ok is false without MinShareSpan of sampled running time: no
// CPU profile ran, or too briefly.
func (i TraceInfo) ProcCPUShare() (share, bound float64, ok bool) {
	if i.SampledBusy < int64(MinShareSpan) || i.ProcSamples == 0 {
		return 0, 0, false
	}
	per := float64(CPUSamplePeriod) / float64(i.SampledBusy)
	return float64(i.ProcSamples) * per, float64(i.SampleThreads) * per, true
}
