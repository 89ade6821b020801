package hostsig

import (
	"fmt"
	"path/filepath"
)

// follow re-reads /proc/PID/cgroup and, when the process moved, reopens the cgroup files.
func (s *Sampler) follow() {
	b, err := s.cgroup.read(0)
	if err != nil {
		s.setCgroupErr(err.Error())
		s.cgroupText = ""
		return
	}
	if s.cgroupText != "" && string(b) == s.cgroupText {
		return
	}
	s.cgroupText = string(b)
	if s.mountsErr != "" {
		s.setCgroupErr(s.mountsErr)
		return
	}
	pc, err := ParseProcCgroup(b)
	if err != nil {
		s.setCgroupErr(err.Error())
		return
	}
	p, err := LocateIn(pc, s.mounts)
	if err != nil {
		s.setCgroupErr(err.Error())
		return
	}
	s.closeCgroupFiles()
	s.place = p
	s.openThrottle()
	s.openCgroupPSI()
}

// setCgroupErr drops the cgroup files and records why both cgroup sources are absent.
func (s *Sampler) setCgroupErr(reason string) {
	s.closeCgroupFiles()
	s.place = Place{}
	s.throttleErr, s.cgPSIErr = reason, reason
}

func (s *Sampler) closeCgroupFiles() {
	for _, f := range s.throttle {
		f.close()
	}
	s.cgPSI.close()
	s.throttle, s.cgPSI = nil, nil
	s.throttleErr, s.cgPSIErr = "", ""
}

// openThrottle opens cpu.stat of the process's cgroup and of its ancestors below the root
// (the root itself only when the process is there: it has no quota to throttle against).
func (s *Sampler) openThrottle() {
	levels := s.place.Levels(s.mounts)
	if len(levels) > 1 {
		levels = levels[:len(levels)-1]
	}
	for _, lv := range levels {
		f, err := openPfile(filepath.Join(lv.Dir, "cpu.stat"))
		if err != nil {
			s.closeCgroupFiles()
			s.throttleErr = err.Error()
			return
		}
		s.throttle = append(s.throttle, f)
	}
	if len(s.throttle) == 0 {
		s.throttleErr = fmt.Sprintf("no directory for cgroup %s", s.place.CPUPath)
	}
}

func (s *Sampler) openCgroupPSI() {
	if s.place.V2Dir == "" {
		s.cgPSIErr = "no v2 cgroup hierarchy mounted"
		return
	}
	if s.place.V2Path == "/" { // the root's pressure is the machine's: /proc/pressure/cpu says it already
		s.cgPSIErr = "the process's v2 cgroup is the root, whose cpu.pressure is the machine's PSI"
		return
	}
	s.cgPSI, s.cgPSIErr = openSource(filepath.Join(s.place.V2Dir, "cpu.pressure"))
}

func (s *Sampler) readThrottle(smp *Sample) {
	smp.Absent[SourceThrottle] = s.throttleErr
	if s.throttleErr != "" {
		return
	}
	var sum CPUStat
	for _, f := range s.throttle {
		b, err := f.read(0)
		var st CPUStat
		if err == nil {
			st, err = ParseCPUStat(b, s.place.CPU)
			if err != nil {
				err = fmt.Errorf("%s: %w", f.f.Name(), err)
			}
		}
		if err != nil {
			smp.Absent[SourceThrottle] = err.Error()
			return
		}
		if st.HasThrottling {
			sum.HasThrottling = true
			sum.Periods += st.Periods
			sum.Throttled += st.Throttled
			sum.ThrottledTime += st.ThrottledTime
		}
	}
	if !sum.HasThrottling {
		smp.Absent[SourceThrottle] = fmt.Sprintf("%v cgroup %s has no throttling counters (cpu controller not enabled)", s.place.CPU, s.place.CPUPath)
		return
	}
	smp.CgroupVersion = s.place.CPU
	smp.Periods, smp.Throttled, smp.ThrottledTime = sum.Periods, sum.Throttled, sum.ThrottledTime
}

func (s *Sampler) readCgroupPSI(smp *Sample) {
	smp.Absent[SourceCgroupPSI] = s.cgPSIErr
	if s.cgPSI == nil {
		return
	}
	p, err := readPSI(s.cgPSI)
	if err != nil {
		smp.Absent[SourceCgroupPSI] = err.Error()
		return
	}
	smp.CgroupSome, smp.CgroupFull = p.Some.Total, p.Full.Total
}
