package hostsig

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// SystemCPU is the first "cpu" line of /proc/stat: CPU time of all CPUs by kind, each a
// counter. Steal is time a virtual CPU was ready but the hypervisor ran something else,
// summed over the CPUs. CPUs is the number of cpuN lines that follow (the online CPUs, a
// gauge); 0 when they are missing or may have been cut off.
type SystemCPU struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal time.Duration
	CPUs                                                  int
}

// systemCPUFields lists the fields of the cpu line in file order.
func (c *SystemCPU) fields() []*time.Duration {
	return []*time.Duration{&c.User, &c.Nice, &c.System, &c.Idle, &c.IOWait, &c.IRQ, &c.SoftIRQ, &c.Steal}
}

// ParseSystemStat parses the aggregate "cpu" line of /proc/stat, and counts the cpuN lines
// after it; hz is the clock-tick rate. Kernels before 2.6.11 had no steal field; it is then
// an error.
func ParseSystemStat(b []byte, hz int) (SystemCPU, error) {
	if hz <= 0 {
		return SystemCPU{}, fmt.Errorf("parse /proc/stat: clock tick rate %d", hz)
	}
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) == 0 || string(f[0]) != "cpu" {
		return SystemCPU{}, fmt.Errorf("parse /proc/stat: first line %q is not the cpu line", clip(line))
	}
	var c SystemCPU
	dst := c.fields()
	if len(f)-1 < len(dst) {
		return SystemCPU{}, fmt.Errorf("parse /proc/stat: cpu line has %d values, want at least %d (steal)", len(f)-1, len(dst))
	}
	for i, d := range dst {
		n, err := strconv.ParseUint(string(f[i+1]), 10, 64)
		if err != nil {
			return SystemCPU{}, fmt.Errorf("parse /proc/stat: cpu field %d: %w", i+1, err)
		}
		*d = ticks(n, hz)
	}
	c.CPUs = countCPULines(rest)
	return c, nil
}

// countCPULines counts the cpuN lines at the start of b. It returns 0 when b ends inside
// them (a read cut short), because a count that is too low would inflate the steal per CPU.
func countCPULines(b []byte) int {
	n := 0
	for len(b) > 0 {
		line, rest, complete := bytes.Cut(b, []byte("\n"))
		name, _, named := bytes.Cut(line, []byte(" "))
		switch {
		case !complete && !named && (bytes.HasPrefix([]byte("cpu"), name) || isCPUName(name)):
			return 0 // cut inside a word that may have become a cpuN
		case !isCPUName(name):
			return n
		case !complete:
			return 0 // cut inside a cpuN line
		}
		n++
		b = rest
	}
	return n
}

// isCPUName tells whether name is "cpu" followed by a decimal number.
func isCPUName(name []byte) bool {
	digits, ok := bytes.CutPrefix(name, []byte("cpu"))
	if !ok || len(digits) == 0 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
