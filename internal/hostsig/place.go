package hostsig

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
)

// Place is where a process's CPU is accounted: its cgroup in the hierarchy with the cpu
// controller, and its v2 cgroup (which has the per-cgroup PSI). Paths are relative to the
// hierarchy root, "/" being the root itself; directories are where they are mounted here.
type Place struct {
	CPU     CgroupVersion // hierarchy of the cpu controller: v1 if the process has a v1 cpu line (as the Go runtime decides), else v2
	CPUPath string        // cgroup path in that hierarchy
	CPUDir  string        // its directory
	V2Path  string        // path in the unified hierarchy; "" when none is mounted
	V2Dir   string        // its directory
}

// Level is one cgroup on the path from a process's cgroup up to the hierarchy root.
type Level struct {
	Path, Dir string
}

// Locate reads /proc/PID/cgroup and /proc/self/mountinfo and returns the place of pid.
func Locate(pid int) (Place, error) {
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return Place{}, fmt.Errorf("locate cgroup: %w", err)
	}
	pc, err := ParseProcCgroup(cg)
	if err != nil {
		return Place{}, fmt.Errorf("locate cgroup of pid %d: %w", pid, err)
	}
	mounts, err := readMounts()
	if err != nil {
		return Place{}, err
	}
	return LocateIn(pc, mounts)
}

func readMounts() ([]Mount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	ms, err := ParseMountinfo(b)
	if err != nil {
		return nil, fmt.Errorf("/proc/self/mountinfo: %w", err)
	}
	return ms, nil
}

// LocateIn resolves a parsed /proc/PID/cgroup against mounts.
func LocateIn(pc ProcCgroup, mounts []Mount) (Place, error) {
	var p Place
	if pc.V2 != "" {
		if dir, err := CgroupDir(mounts, CgroupV2, pc.V2); err == nil {
			p.V2Path, p.V2Dir = pc.V2, dir
		}
	}
	if pc.V1CPU != "" {
		dir, err := CgroupDir(mounts, CgroupV1, pc.V1CPU)
		if err != nil {
			return Place{}, fmt.Errorf("locate cgroup: %w", err)
		}
		p.CPU, p.CPUPath, p.CPUDir = CgroupV1, pc.V1CPU, dir
		return p, nil
	}
	if p.V2Dir == "" {
		return Place{}, fmt.Errorf("locate cgroup: process is in no mounted v1 cpu or v2 hierarchy")
	}
	p.CPU, p.CPUPath, p.CPUDir = CgroupV2, p.V2Path, p.V2Dir
	return p, nil
}

// Levels returns the process's cpu cgroup and its ancestors, nearest first, as far up as
// the mount shows them (the root cgroup included).
func (p Place) Levels(mounts []Mount) []Level {
	var ls []Level
	for cur := p.CPUPath; cur != ""; cur = parentCgroup(cur) {
		dir, err := CgroupDir(mounts, p.CPU, cur)
		if err != nil {
			break
		}
		ls = append(ls, Level{cur, dir})
	}
	return ls
}

// parentCgroup returns the parent path, or "" above the root.
func parentCgroup(p string) string {
	if p == "/" || !strings.HasPrefix(p, "/") {
		return ""
	}
	return path.Dir(p)
}

// Limit is the CPU limit that binds a process: the tightest CFS quota on the path from its
// cgroup to the root. The Go runtime reads only its own cgroup's quota (Own), so a tighter
// parent limit leaves GOMAXPROCS too high.
type Limit struct {
	Quota               // tightest quota on the path
	Path  string        // cgroup whose quota is Quota; "" without any limit
	Own   Quota         // quota of the process's own cgroup
	CPU   CgroupVersion // hierarchy the quotas were read from
}

// ReadLimit returns the CPU limit of process pid.
func ReadLimit(pid int) (Limit, error) {
	p, err := Locate(pid)
	if err != nil {
		return Limit{}, err
	}
	mounts, err := readMounts()
	if err != nil {
		return Limit{}, err
	}
	return p.Limit(mounts)
}

// Limit reads the quotas of p's cgroup and its ancestors.
func (p Place) Limit(mounts []Mount) (Limit, error) {
	l := Limit{CPU: p.CPU}
	for i, lv := range p.Levels(mounts) {
		q, err := readQuota(lv.Dir, p.CPU)
		if err != nil {
			return Limit{}, err
		}
		if i == 0 {
			l.Own = q
		}
		if q.Tighter(l.Quota) {
			l.Quota, l.Path = q, lv.Path
		}
	}
	return l, nil
}
