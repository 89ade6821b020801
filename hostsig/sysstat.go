package hostsig

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// SystemCPU is the first "cpu" line of /proc/stat: CPU time of all CPUs by kind, each a
// counter. Steal is time a virtual CPU was ready but the hypervisor ran something else.
type SystemCPU struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal time.Duration
}

// systemCPUFields lists the fields of the cpu line in file order.
func (c *SystemCPU) fields() []*time.Duration {
	return []*time.Duration{&c.User, &c.Nice, &c.System, &c.Idle, &c.IOWait, &c.IRQ, &c.SoftIRQ, &c.Steal}
}

// ParseSystemStat parses the aggregate "cpu" line of /proc/stat; hz is the clock-tick rate.
// Kernels before 2.6.11 had no steal field; it is then an error.
func ParseSystemStat(b []byte, hz int) (SystemCPU, error) {
	if hz <= 0 {
		return SystemCPU{}, fmt.Errorf("parse /proc/stat: clock tick rate %d", hz)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
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
	return c, nil
}
