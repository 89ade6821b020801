package budget

import (
	"fmt"
	"time"

	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

// CPULog is the process CPU counter that latscope's agent logs into the
// trace (tracelog.CPU, utime+stime, every sample interval): an instrument
// independent of the tracer, carried by the trace itself, so a snapshot
// needs no counter read beside it (docs/method.md §6).
type CPULog struct {
	Samples     int          // logs that parsed
	Bad         int          // logs that did not, or that went backwards
	First, Last tracein.Time // when the first and last parsed log were written
	// CPU is the counter's increase from the first log to the last.
	CPU            time.Duration
	first, current time.Duration
}

// MinCPULogCover is the least share of the trace window that the agent's
// CPU logs must span for their reading to stand for the window: the rest
// is extrapolated at the logged rate, and beyond half the reading would be
// more extrapolation than measurement.
const MinCPULogCover = 0.5

// add takes one CPU log at t.
func (c *CPULog) add(t tracein.Time, msg string) {
	v, err := tracelog.ParseCPU(msg)
	if err != nil || (c.Samples > 0 && v < c.current) {
		c.Bad++
		return
	}
	if c.Samples == 0 {
		c.First, c.first = t, v
	}
	c.Samples++
	c.Last, c.current = t, v
	c.CPU = v - c.first
}

// Window returns the process CPU over the whole trace window of info: the
// counter's increase over the logged span, scaled to the window. When the
// logs cannot support a reading it returns ok false and says why.
func (c CPULog) Window(info TraceInfo) (cpu time.Duration, ok bool, why string) {
	window := info.Duration()
	span := int64(c.Last - c.First)
	switch {
	case c.Samples == 0:
		return 0, false, "the trace carries no CPU counter log from latscope's agent"
	case c.Samples < 2 || span <= 0:
		return 0, false, fmt.Sprintf("the trace carries %d CPU counter log(s) from latscope's agent; a reading needs two", c.Samples)
	case window <= 0 || float64(span) < MinCPULogCover*float64(window):
		return 0, false, fmt.Sprintf("the agent's CPU counter logs span %.2f s of the %.2f s window, less than %.0f%%", float64(span)/1e9, float64(window)/1e9, 100*MinCPULogCover)
	}
	return time.Duration(float64(c.CPU) * float64(window) / float64(span)), true, ""
}
