package demo

import (
	"crypto/sha256"
	"runtime"
	"slices"
	"time"
)

// Calibration runs calibrationTries measurements of calibrationSpan of CPU
// time each and keeps the median, so one preempted or frequency-shifted try
// does not skew the rate.
const (
	calibrationTries = 5
	calibrationSpan  = 50 * time.Millisecond
	calibrationBatch = 256
)

// calibrate returns how many SHA-256 iterations (the loop of cpuWork) take one
// millisecond of CPU time on this machine. It measures the calling thread's
// CPU time, not wall time, so other load on the machine does not lower it.
func calibrate() int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rates := make([]float64, calibrationTries)
	for i := range rates {
		rates[i] = hashRate(calibrationSpan)
	}
	slices.Sort(rates)
	return max(1, int(rates[len(rates)/2]))
}

// hashRate runs the hash loop until span of thread CPU time has passed and
// returns the iterations per millisecond.
func hashRate(span time.Duration) float64 {
	var sum [32]byte
	start := threadCPU()
	for n := calibrationBatch; ; n += calibrationBatch {
		for range calibrationBatch {
			sum = sha256.Sum256(sum[:])
		}
		if used := threadCPU() - start; used >= span {
			return float64(n) / (float64(used) / float64(time.Millisecond))
		}
	}
}

// iterations is the number of hash iterations that take work of CPU, at
// perMS iterations per millisecond; at least one.
func iterations(perMS int, work time.Duration) int {
	return max(1, int(float64(perMS)*float64(work)/float64(time.Millisecond)))
}

// cpuWork is the cpu segment: iters chained SHA-256 hashes of a 32-byte
// block. It is its own frame so CPU samples name it.
//
//go:noinline
func cpuWork(iters int) [32]byte {
	var sum [32]byte
	for range iters {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}
