package hostsig

import (
	"strings"
	"testing"
	"time"
)

// fullSample is a Sample with every source present and distinct values.
func fullSample() Sample {
	return Sample{
		Mono: 5 * time.Second, Wall: time.Unix(0, 1796220440156354603), PID: 42,
		CgroupPath: "/lab", CgroupV2Path: "/lab",
		UTime: 120 * time.Millisecond, STime: 30 * time.Millisecond, Threads: 7,
		Run: 150 * time.Millisecond, Wait: 400 * time.Millisecond, Timeslices: 67,
		CgroupVersion: CgroupV1, Periods: 15, Throttled: 14, ThrottledTime: 1063313249,
		CgroupSome: 732 * time.Millisecond, CgroupFull: 700 * time.Millisecond,
		SystemSome: 4780 * time.Millisecond, Steal: 690 * time.Millisecond, CPUs: 2,
	}
}

func TestDiff(t *testing.T) {
	a := fullSample()
	later := func(edit func(*Sample)) Sample {
		b := a
		b.Mono += time.Second
		b.UTime += 200 * time.Millisecond
		b.Throttled += 8
		b.CgroupSome += 500 * time.Millisecond
		if edit != nil {
			edit(&b)
		}
		return b
	}
	tests := []struct {
		name   string
		a, b   Sample
		absent map[Source]string // substring of the reason
		check  func(Delta) bool
	}{
		{"increments", a, later(nil), nil, func(d Delta) bool {
			return d.Interval == time.Second && d.CPU() == 200*time.Millisecond && d.Throttled == 8 && d.CgroupSome == 500*time.Millisecond && d.Steal == 0 && d.CPUs == 2
		}},
		{"a CPU came online: the larger count", a, later(func(b *Sample) { b.CPUs, b.Steal = 3, b.Steal+30*time.Millisecond }), nil,
			func(d Delta) bool { return d.CPUs == 3 && d.Steal == 30*time.Millisecond }},
		{"CPU count unknown in one sample (recorded before it was kept)", a, later(func(b *Sample) { b.CPUs = 0 }), nil,
			func(d Delta) bool { return d.CPUs == 0 && d.Has(SourceSteal) }},
		{"absent in one sample", a, later(func(b *Sample) { b.Absent[SourceSteal] = "open /proc/stat: denied" }),
			map[Source]string{SourceSteal: "denied"}, func(d Delta) bool { return d.Throttled == 8 && d.CPUs == 0 }},
		{"cgroup moved", a, later(func(b *Sample) { b.CgroupPath = "/other" }),
			map[Source]string{SourceThrottle: "cgroup changed from /lab to /other"}, func(d Delta) bool { return d.Throttled == 0 && d.CgroupSome > 0 }},
		{"v2 cgroup moved", a, later(func(b *Sample) { b.CgroupV2Path = "/" }),
			map[Source]string{SourceCgroupPSI: "v2 cgroup changed"}, func(d Delta) bool { return d.CgroupSome == 0 && d.Throttled == 8 }},
		{"counter backwards zeroes the whole source", a, later(func(b *Sample) { b.Timeslices = 1 }),
			map[Source]string{SourceSchedstat: "backwards"}, func(d Delta) bool { return d.Run == 0 && d.Wait == 0 }},
		{"other process", a, later(func(b *Sample) { b.PID = 43 }),
			map[Source]string{SourceProcess: "different processes", SourceSchedstat: "", SourceThrottle: "", SourceCgroupPSI: "", SourceSystemPSI: "", SourceSteal: ""}, nil},
		{"out of order", later(nil), a,
			map[Source]string{SourceProcess: "out of order", SourceSchedstat: "", SourceThrottle: "", SourceCgroupPSI: "", SourceSystemPSI: "", SourceSteal: ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff(tt.a, tt.b)
			for src := range NumSources {
				want, absent := tt.absent[src]
				switch {
				case absent && d.Has(src):
					t.Errorf("%v present, want absent", src)
				case absent && !strings.Contains(d.Absent[src], want):
					t.Errorf("%v absent for %q, want %q", src, d.Absent[src], want)
				case !absent && !d.Has(src):
					t.Errorf("%v absent (%s), want present", src, d.Absent[src])
				}
			}
			if tt.check != nil && !tt.check(d) {
				t.Errorf("wrong increments: %+v", d)
			}
		})
	}
}

func TestLogRoundTrip(t *testing.T) {
	odd := fullSample()
	odd.CgroupPath, odd.CgroupV2Path = `/with space/and"quote=`, ""
	odd.Absent[SourceSteal] = "read /proc/stat: permission denied"
	odd.Absent[SourceCgroupPSI] = "no v2 cgroup hierarchy mounted"
	odd.Steal, odd.CPUs, odd.CgroupSome, odd.CgroupFull = 0, 0, 0, 0 // absent sources have zero fields
	noCPUs := fullSample()
	noCPUs.CPUs = 0 // unknown: ncpu left out
	for _, s := range []Sample{fullSample(), odd, noCPUs} {
		text, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseLog(string(text))
		if err != nil {
			t.Fatalf("ParseLog(%s): %v", text, err)
		}
		if !sameSample(got, s) {
			t.Errorf("round trip of\n%s\ngave %+v\nwant %+v", text, got, s)
		}
	}
	text, _ := odd.MarshalText()
	checkGolden(t, "testdata/golden/log.golden", string(text)+"\n")
}

// sameSample compares samples with Wall compared as an instant.
func sameSample(a, b Sample) bool {
	if !a.Wall.Equal(b.Wall) {
		return false
	}
	a.Wall, b.Wall = time.Time{}, time.Time{}
	return a == b
}

func TestParseLogErrors(t *testing.T) {
	good, _ := fullSample().MarshalText()
	tests := []struct {
		name, in, wantErr string
	}{
		{"garbage", "hello", "key=value"},
		{"no mono", strings.Replace(string(good), "mono=", "x=", 1), "no mono"},
		{"duplicate", string(good) + " ut=1", "twice"},
		{"partial source", strings.Replace(string(good), "wait=", "x=", 1), "sched has 2 of its 3 keys"},
		{"present and absent", string(good) + ` no.steal="x"`, "both"},
		{"absent without reason", strings.Replace(string(good), "steal=690000000 ncpu=2", `no.steal=""`, 1), "without a reason"},
		{"ncpu 0", strings.Replace(string(good), "ncpu=2", "ncpu=0", 1), "ncpu: 0, want at least 1"},
		{"ncpu negative", strings.Replace(string(good), "ncpu=2", "ncpu=-2", 1), "ncpu: -2"},
		{"ncpu without steal", strings.Replace(string(good), "steal=690000000 ", "", 1), "steal has only its optional keys"},
		{"ncpu and absent steal", strings.Replace(string(good), "steal=690000000", `no.steal="x"`, 1), "both"},
		{"bad number", strings.Replace(string(good), "ut=120000000", "ut=12x", 1), "ut"},
		{"bad quote", string(good) + ` z="open`, "quoted"},
		{"quote then junk", string(good) + ` z="a"b`, "no space"},
		{"bad version", strings.Replace(string(good), "cgv=v1", "cgv=v3", 1), "cgroup version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseLog(tt.in)
			checkErr(t, err, tt.wantErr)
		})
	}
	// A line recorded before ncpu existed: steal is complete, its CPU count unknown.
	old := strings.Replace(string(good), " ncpu=2", "", 1)
	s, err := ParseLog(old)
	if err != nil {
		t.Fatalf("a line without ncpu: %v", err)
	}
	if !s.Has(SourceSteal) || s.Steal != 690*time.Millisecond || s.CPUs != 0 {
		t.Errorf("a line without ncpu: steal %v (absent %q), CPUs %d; want 690ms, present, 0", s.Steal, s.Absent[SourceSteal], s.CPUs)
	}
	s, err = ParseLog("mono=1 wall=2 pid=3 later=x")
	if err != nil {
		t.Fatal(err)
	}
	if s.Has(SourceProcess) || s.Absent[SourceProcess] != notInLog {
		t.Errorf("a source missing from the log is %q, want %q", s.Absent[SourceProcess], notInLog)
	}
}

func FuzzParseLog(f *testing.F) {
	for _, s := range []Sample{fullSample(), {PID: 1, Absent: [NumSources]string{"a", "b c", "d", "e", "f", "g"}}} {
		text, _ := s.MarshalText()
		f.Add(string(text))
	}
	f.Add(`mono=1 wall=2 pid=3 cg="\x00" no.proc="é"`)
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseLog(text)
		if err != nil {
			return
		}
		again, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := ParseLog(string(again))
		if err != nil {
			t.Fatalf("re-encoded %q does not parse: %v", again, err)
		}
		if !sameSample(s, s2) {
			t.Errorf("round trip changed %+v into %+v", s, s2)
		}
	})
}
