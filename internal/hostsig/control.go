package hostsig

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultPeriod is the CFS enforcement period SetQuota uses when given 0 (the kernel's default).
const DefaultPeriod = 100 * time.Millisecond

// Cgroup is a cgroup made for the lab to limit a process's CPU with a CFS quota. It lives in
// the v1 cpu hierarchy when that is mounted, with a twin of the same name in the v2
// hierarchy (when mounted) so that the processes in it get their own cpu.pressure; without
// v1 it is a v2 cgroup whose cpu.max holds the quota. Making one needs root.
type Cgroup struct {
	Name    string
	Version CgroupVersion // hierarchy holding the quota
	Dir     string        // directory holding the quota
	V2Dir   string        // v2 directory with cpu.pressure; == Dir for a v2 cgroup; "" when none
}

// NewCgroup creates (or reuses) the cgroup name directly below the hierarchy roots, without
// a quota.
func NewCgroup(name string) (*Cgroup, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\n") {
		return nil, fmt.Errorf("new cgroup: bad name %q", name)
	}
	if uid := os.Geteuid(); uid != 0 {
		return nil, fmt.Errorf("new cgroup %s: needs root, running as uid %d", name, uid)
	}
	mounts, err := readMounts()
	if err != nil {
		return nil, fmt.Errorf("new cgroup %s: %w", name, err)
	}
	c := &Cgroup{Name: name}
	v1, v1err := CgroupDir(mounts, CgroupV1, "/")
	v2, v2err := CgroupDir(mounts, CgroupV2, "/")
	switch {
	case v1err == nil:
		c.Version, c.Dir = CgroupV1, filepath.Join(v1, name)
	case v2err == nil:
		if err := checkV2CPU(v2); err != nil {
			return nil, fmt.Errorf("new cgroup %s: %w", name, err)
		}
		c.Version, c.Dir = CgroupV2, filepath.Join(v2, name)
	default:
		return nil, fmt.Errorf("new cgroup %s: %w; %w", name, v1err, v2err)
	}
	if err := mkdirCgroup(c.Dir); err != nil {
		return nil, fmt.Errorf("new cgroup %s: %w", name, err)
	}
	if v2err == nil {
		c.V2Dir = filepath.Join(v2, name)
		if err := mkdirCgroup(c.V2Dir); err != nil {
			c.Remove()
			return nil, fmt.Errorf("new cgroup %s: %w", name, err)
		}
	}
	return c, nil
}

// checkV2CPU tells whether children of the v2 root can have cpu.max.
func checkV2CPU(root string) error {
	b, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
	if err != nil {
		return err
	}
	if !strings.Contains(" "+strings.TrimSpace(string(b))+" ", " cpu ") {
		return fmt.Errorf("no v1 cpu hierarchy, and the cpu controller is not enabled in %s/cgroup.subtree_control (echo +cpu > it)", root)
	}
	return nil
}

func mkdirCgroup(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("%w (is the cgroup hierarchy mounted read-only, as in a container?)", err)
	}
	return err
}

// SetQuota limits the cgroup to cpus CPUs per period (DefaultPeriod when 0). cpus <= 0 or
// +Inf removes the limit. The kernel wants 1 ms ≤ period ≤ 1 s and a quota of at least 1 ms.
func (c *Cgroup) SetQuota(cpus float64, period time.Duration) error {
	if period == 0 {
		period = DefaultPeriod
	}
	if period < time.Millisecond || period > time.Second {
		return fmt.Errorf("set quota of %s: period %v outside 1ms..1s", c.Name, period)
	}
	periodUS := period.Microseconds()
	quotaUS := int64(-1)
	if cpus > 0 && !math.IsInf(cpus, 1) {
		quotaUS = int64(math.Round(cpus * float64(periodUS)))
		if quotaUS < 1000 {
			return fmt.Errorf("set quota of %s: %g CPU of %v is below the 1ms minimum", c.Name, cpus, period)
		}
	}
	if c.Version == CgroupV2 {
		q := "max"
		if quotaUS >= 0 {
			q = strconv.FormatInt(quotaUS, 10)
		}
		return writeCgroup(c.Dir, "cpu.max", q+" "+strconv.FormatInt(periodUS, 10))
	}
	if err := writeCgroup(c.Dir, "cpu.cfs_period_us", strconv.FormatInt(periodUS, 10)); err != nil {
		return err
	}
	return writeCgroup(c.Dir, "cpu.cfs_quota_us", strconv.FormatInt(quotaUS, 10))
}

// SetWeight sets the cgroup's CPU weight against its siblings, in v2 units (1..10000,
// default 100; v1 cpu.shares = weight × 1024 / 100). A high weight makes the quota the only
// limit even when other processes keep the CPUs busy.
func (c *Cgroup) SetWeight(weight int) error {
	if weight < 1 || weight > 10000 {
		return fmt.Errorf("set weight of %s: %d outside 1..10000", c.Name, weight)
	}
	if c.Version == CgroupV2 {
		return writeCgroup(c.Dir, "cpu.weight", strconv.Itoa(weight))
	}
	return writeCgroup(c.Dir, "cpu.shares", strconv.Itoa(weight*1024/100))
}

// Quota reads back the cgroup's quota.
func (c *Cgroup) Quota() (Quota, error) { return readQuota(c.Dir, c.Version) }

// Add moves process pid, with all its threads, into the cgroup (and its v2 twin).
func (c *Cgroup) Add(pid int) error {
	for _, dir := range c.dirs() {
		if err := writeCgroup(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("add pid %d to cgroup %s: %w", pid, c.Name, err)
		}
	}
	return nil
}

func (c *Cgroup) dirs() []string {
	if c.V2Dir == "" || c.V2Dir == c.Dir {
		return []string{c.Dir}
	}
	return []string{c.Dir, c.V2Dir}
}

func writeCgroup(dir, file, value string) error {
	name := filepath.Join(dir, file)
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, name, err)
	}
	return nil
}
