package hostsig

import (
	"syscall"
	"time"
)

// SelfCPU is the CPU time this process has used, user and system, from
// getrusage(2) (finer than /proc/self/stat's clock ticks); 0 if it cannot
// be read.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
