package hostsig

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// DefaultUserHZ is the clock-tick rate (USER_HZ, sysconf(_SC_CLK_TCK)) in which /proc reports
// CPU times. It is 100 on every Linux architecture Go supports; UserHZ reads the real value.
const DefaultUserHZ = 100

// atClkTck is the auxiliary-vector key of the clock-tick rate (AT_CLKTCK in <elf.h>).
const atClkTck = 17

// UserHZ returns the clock-tick rate the kernel handed this process in its auxiliary vector
// (/proc/self/auxv, AT_CLKTCK), which is what sysconf(_SC_CLK_TCK) returns. It falls back to
// DefaultUserHZ, with the error, when the vector cannot be read.
func UserHZ() (int, error) {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return DefaultUserHZ, fmt.Errorf("read clock tick rate: %w", err)
	}
	hz, err := ParseAuxvClockTick(b)
	if err != nil {
		return DefaultUserHZ, fmt.Errorf("read clock tick rate from /proc/self/auxv: %w", err)
	}
	return hz, nil
}

// ParseAuxvClockTick returns AT_CLKTCK from the contents of /proc/PID/auxv, a sequence of
// native-endian (key, value) word pairs ended by key 0. It assumes the word size of the
// running program.
func ParseAuxvClockTick(b []byte) (int, error) {
	const word = int(unsafe.Sizeof(uintptr(0)))
	for off := 0; off+2*word <= len(b); off += 2 * word {
		key, val := auxvWord(b[off:], word), auxvWord(b[off+word:], word)
		switch {
		case key == 0:
			return 0, fmt.Errorf("no AT_CLKTCK before end of vector at offset %d", off)
		case key == atClkTck && (val == 0 || val > 1e6):
			return 0, fmt.Errorf("implausible AT_CLKTCK %d at offset %d", val, off)
		case key == atClkTck:
			return int(val), nil
		}
	}
	return 0, fmt.Errorf("no AT_CLKTCK in %d bytes", len(b))
}

func auxvWord(b []byte, word int) uint64 {
	if word == 4 {
		return uint64(binary.NativeEndian.Uint32(b))
	}
	return binary.NativeEndian.Uint64(b)
}

// ticks converts a count of clock ticks at hz per second to a duration.
// It saturates at the largest duration instead of wrapping.
func ticks(n uint64, hz int) time.Duration {
	sec, rest := n/uint64(hz), n%uint64(hz)
	if sec >= uint64(math.MaxInt64/time.Second) {
		return math.MaxInt64
	}
	return time.Duration(sec)*time.Second + time.Duration(rest)*time.Second/time.Duration(hz)
}

// scaled converts a count of units (time.Microsecond, time.Nanosecond) to a duration,
// saturating at the largest duration.
func scaled(n uint64, unit time.Duration) time.Duration {
	if n >= uint64(math.MaxInt64/unit) {
		return math.MaxInt64
	}
	return time.Duration(n) * unit
}

// Monotonic returns CLOCK_MONOTONIC as a duration since boot. On Linux this is the clock the
// Go runtime uses for execution-trace timestamps (runtime.nanotime).
func Monotonic() (time.Duration, error) {
	var ts syscall.Timespec
	const clockMonotonic = 1
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, fmt.Errorf("clock_gettime(CLOCK_MONOTONIC): %w", errno)
	}
	return time.Duration(ts.Nano()), nil
}
