package hostsig

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
)

// ProcCgroup is where a process sits in the cgroup hierarchies that matter for CPU, from
// /proc/PID/cgroup. Paths are relative to the hierarchy root and start with "/"; "/" means
// the root cgroup itself. An empty path means the process is in no such hierarchy.
type ProcCgroup struct {
	V1CPU string // path in the v1 hierarchy that has the cpu controller (line "N:cpu,cpuacct:/p")
	V2    string // path in the v2 unified hierarchy (line "0::/p")
}

// ParseProcCgroup parses /proc/PID/cgroup: lines "hierarchy-ID:controller-list:path".
func ParseProcCgroup(b []byte) (ProcCgroup, error) {
	var c ProcCgroup
	for i, line := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		id, rest, ok1 := bytes.Cut(line, []byte(":"))
		ctl, p, ok2 := bytes.Cut(rest, []byte(":"))
		if !ok1 || !ok2 || len(p) == 0 || p[0] != '/' {
			return ProcCgroup{}, fmt.Errorf("parse /proc/PID/cgroup: line %d: %q is not id:controllers:/path", i+1, clip(line))
		}
		switch {
		case string(id) == "0" && len(ctl) == 0:
			c.V2 = string(p)
		case slices.Contains(strings.Split(string(ctl), ","), "cpu"):
			if c.V1CPU != "" {
				return ProcCgroup{}, fmt.Errorf("parse /proc/PID/cgroup: line %d: second cpu controller", i+1)
			}
			c.V1CPU = string(p)
		}
	}
	return c, nil
}

// Mount is one line of /proc/PID/mountinfo, reduced to what locating a cgroup needs.
type Mount struct {
	Root         string   // the directory of the filesystem mounted here ("/" unless a bind or cgroup-namespace mount)
	Point        string   // where it is mounted
	FSType       string   // "cgroup", "cgroup2", ...
	SuperOptions []string // for v1 cgroups, the controllers ("rw", "cpu", "cpuacct", ...)
}

// ParseMountinfo parses /proc/PID/mountinfo (proc(5)): "ID parent maj:min root point options
// [optional...] - fstype source superoptions". Octal escapes (\040) in paths are decoded.
func ParseMountinfo(b []byte) ([]Mount, error) {
	var ms []Mount
	for i, line := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		pre, post, ok := bytes.Cut(line, []byte(" - "))
		f, g := bytes.Fields(pre), bytes.Fields(post)
		if !ok || len(f) < 6 || len(g) < 2 {
			return nil, fmt.Errorf("parse mountinfo: line %d: %q has not the mountinfo shape", i+1, clip(line))
		}
		m := Mount{Root: unescapeMount(f[3]), Point: unescapeMount(f[4]), FSType: string(g[0])}
		if len(g) > 2 {
			m.SuperOptions = strings.Split(string(g[2]), ",")
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// unescapeMount decodes the \ooo escapes the kernel writes for space, tab, newline and '\'.
func unescapeMount(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+3 < len(b) && isOctal(b[i+1]) && isOctal(b[i+2]) && isOctal(b[i+3]) {
			out = append(out, (b[i+1]-'0')<<6|(b[i+2]-'0')<<3|(b[i+3]-'0'))
			i += 3
			continue
		}
		out = append(out, b[i])
	}
	return string(out)
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// holds tells whether m is a mount of the hierarchy version v with the cpu controller
// (v1) or the unified hierarchy (v2).
func (m Mount) holds(v CgroupVersion) bool {
	switch v {
	case CgroupV1:
		return m.FSType == "cgroup" && slices.Contains(m.SuperOptions, "cpu")
	case CgroupV2:
		return m.FSType == "cgroup2"
	}
	return false
}

// CgroupDir returns the directory of the cgroup at path p of hierarchy v, using the first of
// mounts that holds that hierarchy and whose root contains p.
func CgroupDir(mounts []Mount, v CgroupVersion, p string) (string, error) {
	if !strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") {
		return "", fmt.Errorf("%v cgroup %q is not a path inside this cgroup namespace", v, p)
	}
	found := false
	for _, m := range mounts {
		if !m.holds(v) {
			continue
		}
		found = true
		if rel, ok := underRoot(p, m.Root); ok {
			return path.Join(m.Point, rel), nil
		}
	}
	if !found {
		return "", fmt.Errorf("no %v cgroup mount with the cpu controller in mountinfo", v)
	}
	return "", fmt.Errorf("%v cgroup %s is under no mount root in mountinfo", v, p)
}

// underRoot returns p relative to root when p is root or inside it.
func underRoot(p, root string) (string, bool) {
	p, root = path.Clean(p), path.Clean(root)
	switch {
	case root == "/":
		return p, true
	case p == root:
		return "/", true
	case strings.HasPrefix(p, root+"/"):
		return p[len(root):], true
	}
	return "", false
}
