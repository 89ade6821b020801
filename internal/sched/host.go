package sched

import (
	"fmt"
	"runtime"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

// Host is what the analysed process may use. Zero fields are unknown.
type Host struct {
	// GOMAXPROCS is the process's setting when known exactly (a live
	// process reports it); otherwise the Ps seen in the trace stand in.
	GOMAXPROCS int
	// NumCPU is the number of CPUs the process may run on.
	NumCPU int
	// Limit is the CPU quota on the process's cgroup path; nil when unknown.
	Limit *hostsig.Limit
}

// HostOf reads the CPU limit of a live process on this machine
// (hostsig.ReadLimit) and the CPUs online here. GOMAXPROCS stays unknown.
func HostOf(pid int) (Host, error) {
	l, err := hostsig.ReadLimit(pid)
	if err != nil {
		return Host{}, fmt.Errorf("cpu limit of pid %d: %w", pid, err)
	}
	return Host{NumCPU: runtime.NumCPU(), Limit: &l}, nil
}

// QuotaHost is a Host with a CFS quota of cpus CPUs given by hand (a
// --quota flag): the quota is taken to be the process's own cgroup's, and
// the CPUs online are unknown.
func QuotaHost(cpus float64) Host {
	q := hostsig.Quota{Limited: true, CPUs: cpus, Period: 100 * time.Millisecond}
	return Host{Limit: &hostsig.Limit{Quota: q, Own: q, Path: "(given)"}}
}

// Procs compares the Ps a process runs with the CPUs it may use.
type Procs struct {
	GOMAXPROCS int `json:"gomaxprocs,omitempty"` // exact, when known
	PsSeen     int `json:"ps_seen,omitempty"`    // Ps that ran in the trace
	NumCPU     int `json:"num_cpu,omitempty"`
	// Quota is the tightest CFS quota on the cgroup path in CPUs (0: no
	// limit or unknown); QuotaPath names its cgroup.
	Quota     float64 `json:"quota_cpus,omitempty"`
	QuotaPath string  `json:"quota_path,omitempty"`
	// OwnQuota is the quota of the process's own cgroup, the only one the
	// Go runtime reads (Go 1.25+, golang/go#81180).
	OwnQuota float64 `json:"own_quota_cpus,omitempty"`
	Known    bool    `json:"limit_known"` // whether the quota was read or given
	// Fit is the GOMAXPROCS that respects the tightest limit,
	// min(CPUs, max(2, ⌈quota⌉)); RuntimeDefault is what Go 1.25+ picks
	// from the own cgroup alone. 0 when the CPUs are unknown and no quota
	// binds.
	Fit            int `json:"fit,omitempty"`
	RuntimeDefault int `json:"runtime_default,omitempty"`
}

// Effective returns GOMAXPROCS when known, else the Ps seen.
func (p Procs) Effective() int {
	if p.GOMAXPROCS > 0 {
		return p.GOMAXPROCS
	}
	return p.PsSeen
}

// Above reports whether the process runs more Ps than fit its limit.
func (p Procs) Above() bool { return p.Fit > 0 && p.Effective() > p.Fit }

// ParentMissed reports whether a parent cgroup's quota is tighter than the
// process's own, so the runtime's default GOMAXPROCS misses it.
func (p Procs) ParentMissed() bool {
	return p.Known && p.Quota > 0 && (p.OwnQuota == 0 || p.Quota < p.OwnQuota)
}

func procsOf(h Host, psSeen int) Procs {
	p := Procs{GOMAXPROCS: h.GOMAXPROCS, PsSeen: psSeen, NumCPU: h.NumCPU}
	ncpu := h.NumCPU
	if ncpu <= 0 {
		ncpu = 1 << 20 // unknown: only a quota can bind
	}
	if l := h.Limit; l != nil {
		p.Known = true
		if l.Limited {
			p.Quota, p.QuotaPath = l.CPUs, l.Path
		}
		if l.Own.Limited {
			p.OwnQuota = l.Own.CPUs
		}
		if l.Limited || h.NumCPU > 0 {
			p.Fit = hostsig.GOMAXPROCSFor(l.Quota, ncpu)
		}
		if l.Own.Limited || h.NumCPU > 0 {
			p.RuntimeDefault = hostsig.GOMAXPROCSFor(l.Own, ncpu)
		}
		return p
	}
	if h.NumCPU > 0 {
		p.Fit, p.RuntimeDefault = h.NumCPU, h.NumCPU
	}
	return p
}
