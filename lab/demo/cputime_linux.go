package demo

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling OS thread has used, to the
// nanosecond (CLOCK_THREAD_CPUTIME_ID; getrusage only advances on scheduler
// ticks). The caller must hold its thread with runtime.LockOSThread. If the
// call fails it falls back to wall time, which only makes calibration noisier.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}
