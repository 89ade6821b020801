package hostsig

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// CgroupVersion names a cgroup hierarchy kind.
type CgroupVersion uint8

// Cgroup hierarchy kinds.
const (
	NoCgroup CgroupVersion = iota // not known or not read
	CgroupV1                      // a v1 hierarchy with the cpu controller
	CgroupV2                      // the v2 unified hierarchy
)

var cgroupVersionNames = [...]string{NoCgroup: "none", CgroupV1: "v1", CgroupV2: "v2"}

// String returns "none", "v1" or "v2".
func (v CgroupVersion) String() string {
	if int(v) < len(cgroupVersionNames) {
		return cgroupVersionNames[v]
	}
	return "CgroupVersion(" + strconv.Itoa(int(v)) + ")"
}

// CPUStat is a cgroup's cpu.stat, v1 or v2 in one shape. All values are counters.
type CPUStat struct {
	Version CgroupVersion

	// HasUsage says Usage, User and System were read (v2 only).
	HasUsage            bool
	Usage, User, System time.Duration

	// HasThrottling says the CFS bandwidth fields were read (v1 always; v2 only when the cpu
	// controller is enabled for the cgroup).
	HasThrottling bool
	Periods       uint64        // enforcement periods that elapsed while the cgroup had runnable tasks
	Throttled     uint64        // periods in which the cgroup ran out of quota
	ThrottledTime time.Duration // summed over CPUs, so it can exceed wall time
}

// Keys of cpu.stat that ParseCPUStat reads, per version and group.
var (
	cpuStatV1Throttling = []string{"nr_periods", "nr_throttled", "throttled_time"}
	cpuStatV2Usage      = []string{"usage_usec", "user_usec", "system_usec"}
	cpuStatV2Throttling = []string{"nr_periods", "nr_throttled", "throttled_usec"}
)

// ParseCPUStat parses a cgroup cpu.stat file of hierarchy version v: "key value" lines.
// Unknown keys (nr_bursts, nice_usec, ...) are ignored. v1 files must have the three
// throttling keys; v2 files must have the usage keys, and the throttling keys all or none.
func ParseCPUStat(b []byte, v CgroupVersion) (CPUStat, error) {
	kv, err := parseKeyValues(b)
	if err != nil {
		return CPUStat{}, fmt.Errorf("parse cpu.stat: %w", err)
	}
	s := CPUStat{Version: v}
	switch v {
	case CgroupV1:
		if err := requireKeys(kv, cpuStatV1Throttling); err != nil {
			return CPUStat{}, fmt.Errorf("parse cpu.stat (v1): %w", err)
		}
		s.HasThrottling = true
		s.Periods, s.Throttled = kv["nr_periods"], kv["nr_throttled"]
		s.ThrottledTime = scaled(kv["throttled_time"], time.Nanosecond)
	case CgroupV2:
		if err := requireKeys(kv, cpuStatV2Usage); err != nil {
			return CPUStat{}, fmt.Errorf("parse cpu.stat (v2): %w", err)
		}
		s.HasUsage = true
		s.Usage = scaled(kv["usage_usec"], time.Microsecond)
		s.User = scaled(kv["user_usec"], time.Microsecond)
		s.System = scaled(kv["system_usec"], time.Microsecond)
		if _, ok := kv["nr_periods"]; !ok {
			return s, nil // the cpu controller is not enabled for this cgroup
		}
		if err := requireKeys(kv, cpuStatV2Throttling); err != nil {
			return CPUStat{}, fmt.Errorf("parse cpu.stat (v2): %w", err)
		}
		s.HasThrottling = true
		s.Periods, s.Throttled = kv["nr_periods"], kv["nr_throttled"]
		s.ThrottledTime = scaled(kv["throttled_usec"], time.Microsecond)
	default:
		return CPUStat{}, fmt.Errorf("parse cpu.stat: cgroup version %v", v)
	}
	return s, nil
}

// parseKeyValues parses lines of "key unsigned-decimal".
func parseKeyValues(b []byte) (map[string]uint64, error) {
	kv := make(map[string]uint64, 8)
	for i, line := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: %q is not \"key value\"", i+1, clip(line))
		}
		k := string(f[0])
		if _, dup := kv[k]; dup {
			return nil, fmt.Errorf("line %d: %s given twice", i+1, k)
		}
		n, err := strconv.ParseUint(string(f[1]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", i+1, k, err)
		}
		kv[k] = n
	}
	return kv, nil
}

func requireKeys(kv map[string]uint64, keys []string) error {
	for _, k := range keys {
		if _, ok := kv[k]; !ok {
			return fmt.Errorf("no %s", k)
		}
	}
	return nil
}
