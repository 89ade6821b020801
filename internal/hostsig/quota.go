package hostsig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Quota is a CFS bandwidth limit: the cgroup may run Quota×Period of CPU time per Period.
type Quota struct {
	Limited bool          // false: no limit ("max", or -1)
	CPUs    float64       // quota/period, in CPUs; 0 when not limited
	Period  time.Duration // enforcement period
}

// NoLimit is the Quota of a cgroup without a CFS limit.
var NoLimit = Quota{}

// String returns "no limit" or, for example, "0.2 CPU per 100ms".
func (q Quota) String() string {
	if !q.Limited {
		return "no limit"
	}
	return fmt.Sprintf("%.3g CPU per %v", q.CPUs, q.Period)
}

// Tighter tells whether q allows less CPU than o.
func (q Quota) Tighter(o Quota) bool {
	return q.Limited && (!o.Limited || q.CPUs < o.CPUs)
}

// ParseCFSQuota parses the v1 pair cpu.cfs_quota_us and cpu.cfs_period_us (microseconds;
// a negative quota means no limit).
func ParseCFSQuota(quota, period []byte) (Quota, error) {
	q, err := strconv.ParseInt(string(bytes.TrimSpace(quota)), 10, 64)
	if err != nil {
		return Quota{}, fmt.Errorf("parse cpu.cfs_quota_us: %w", err)
	}
	p, err := strconv.ParseUint(string(bytes.TrimSpace(period)), 10, 64)
	if err != nil {
		return Quota{}, fmt.Errorf("parse cpu.cfs_period_us: %w", err)
	}
	return makeQuota(q, p)
}

// ParseCPUMax parses a v2 cpu.max: "quota period" in microseconds, quota "max" for no limit.
func ParseCPUMax(b []byte) (Quota, error) {
	f := bytes.Fields(b)
	if len(f) != 2 {
		return Quota{}, fmt.Errorf("parse cpu.max: %q is not \"quota period\"", clip(b))
	}
	p, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return Quota{}, fmt.Errorf("parse cpu.max: period: %w", err)
	}
	if string(f[0]) == "max" {
		return makeQuota(-1, p)
	}
	q, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil || q < 0 {
		return Quota{}, fmt.Errorf("parse cpu.max: quota %q is neither max nor microseconds", clip(f[0]))
	}
	return makeQuota(q, p)
}

func makeQuota(quotaUS int64, periodUS uint64) (Quota, error) {
	if periodUS == 0 || periodUS > math.MaxInt64/uint64(time.Microsecond) {
		return Quota{}, fmt.Errorf("period %d µs out of range", periodUS)
	}
	period := time.Duration(periodUS) * time.Microsecond
	if quotaUS < 0 {
		return Quota{Period: period}, nil
	}
	return Quota{Limited: true, CPUs: float64(quotaUS) / float64(periodUS), Period: period}, nil
}

// GOMAXPROCSFor returns the GOMAXPROCS the Go runtime (1.25 and later) picks by default for
// ncpu usable CPUs under quota q: min(ncpu, max(2, ceil(q.CPUs))).
func GOMAXPROCSFor(q Quota, ncpu int) int {
	if !q.Limited {
		return ncpu
	}
	return min(ncpu, max(2, int(math.Ceil(q.CPUs))))
}

// readQuota reads the quota of the cgroup directory dir of hierarchy v. A directory without
// quota files (the v2 root, or a v2 cgroup without the cpu controller) has no limit.
func readQuota(dir string, v CgroupVersion) (Quota, error) {
	var q Quota
	var err error
	switch v {
	case CgroupV1:
		var qb, pb []byte
		if qb, err = os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us")); err == nil {
			if pb, err = os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us")); err == nil {
				q, err = ParseCFSQuota(qb, pb)
			}
		}
	case CgroupV2:
		var b []byte
		if b, err = os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
			q, err = ParseCPUMax(b)
		}
	default:
		return Quota{}, fmt.Errorf("read quota in %s: cgroup version %v", dir, v)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return Quota{}, fmt.Errorf("read quota: %w", serr)
		}
		return NoLimit, nil
	}
	if err != nil {
		return Quota{}, fmt.Errorf("read quota in %s: %w", dir, err)
	}
	return q, nil
}
