package hostsig

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LogCategory is the trace.Log category under which an agent records samples in a Go
// execution trace (runtime/trace.Log(ctx, LogCategory, string(text))).
const LogCategory = "latscope.host"

// header marks logFields that belong to no source and are always written.
const header = NumSources

// logField is one key of the text form and where it lives in a Sample.
type logField struct {
	key string
	src Source
	ptr func(*Sample) any // *time.Duration, *time.Time, *uint64, *int, *string or *CgroupVersion
}

// optionalKeys were added after the first samples were recorded. Each is an *int, written
// only when positive (0 = unknown), and a source without it is still complete, so lines
// recorded before it existed still decode.
var optionalKeys = map[string]bool{"ncpu": true}

func (f logField) optional() bool { return optionalKeys[f.key] }

// logFields lists the keys in the order MarshalText writes them. Durations are integer
// nanoseconds, Wall is Unix nanoseconds.
var logFields = []logField{
	{"mono", header, func(s *Sample) any { return &s.Mono }},
	{"wall", header, func(s *Sample) any { return &s.Wall }},
	{"pid", header, func(s *Sample) any { return &s.PID }},
	{"cg", header, func(s *Sample) any { return &s.CgroupPath }},
	{"cg2", header, func(s *Sample) any { return &s.CgroupV2Path }},
	{"ut", SourceProcess, func(s *Sample) any { return &s.UTime }},
	{"st", SourceProcess, func(s *Sample) any { return &s.STime }},
	{"thr", SourceProcess, func(s *Sample) any { return &s.Threads }},
	{"run", SourceSchedstat, func(s *Sample) any { return &s.Run }},
	{"wait", SourceSchedstat, func(s *Sample) any { return &s.Wait }},
	{"slices", SourceSchedstat, func(s *Sample) any { return &s.Timeslices }},
	{"cgv", SourceThrottle, func(s *Sample) any { return &s.CgroupVersion }},
	{"per", SourceThrottle, func(s *Sample) any { return &s.Periods }},
	{"thrn", SourceThrottle, func(s *Sample) any { return &s.Throttled }},
	{"thrt", SourceThrottle, func(s *Sample) any { return &s.ThrottledTime }},
	{"cgsome", SourceCgroupPSI, func(s *Sample) any { return &s.CgroupSome }},
	{"cgfull", SourceCgroupPSI, func(s *Sample) any { return &s.CgroupFull }},
	{"some", SourceSystemPSI, func(s *Sample) any { return &s.SystemSome }},
	{"full", SourceSystemPSI, func(s *Sample) any { return &s.SystemFull }},
	{"steal", SourceSteal, func(s *Sample) any { return &s.Steal }},
	{"ncpu", SourceSteal, func(s *Sample) any { return &s.CPUs }}, // optional
}

// absentPrefix starts the key that records why a source is absent: no.cgpsi="reason".
const absentPrefix = "no."

// MarshalText encodes s as space-separated key=value pairs, for example
//
//	mono=5012345678 wall=1796220440156354603 pid=42 cg=/lab cg2=/lab ut=120000000 ... no.steal="open /proc/stat: ..."
//
// The fields of an absent source are replaced by its no.<source> key. ncpu (Sample.CPUs) is
// left out when it is unknown (0).
func (s Sample) MarshalText() ([]byte, error) {
	var b strings.Builder
	src := Source(255)
	for _, f := range logFields {
		if f.src != header && !s.Has(f.src) {
			if f.src != src {
				writeKV(&b, absentPrefix+f.src.String(), quoteIfNeeded(s.Absent[f.src]))
			}
			src = f.src
			continue
		}
		src = f.src
		if f.optional() && *f.ptr(&s).(*int) <= 0 {
			continue // unknown: left out, as in samples recorded before the key existed
		}
		writeKV(&b, f.key, formatValue(f.ptr(&s)))
	}
	return []byte(b.String()), nil
}

func writeKV(b *strings.Builder, k, v string) {
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(k)
	b.WriteByte('=')
	b.WriteString(v)
}

func formatValue(p any) string {
	switch p := p.(type) {
	case *time.Duration:
		return strconv.FormatInt(int64(*p), 10)
	case *time.Time:
		return strconv.FormatInt(p.UnixNano(), 10)
	case *uint64:
		return strconv.FormatUint(*p, 10)
	case *int:
		return strconv.Itoa(*p)
	case *string:
		return quoteIfNeeded(*p)
	case *CgroupVersion:
		return p.String()
	}
	panic(fmt.Sprintf("hostsig: logField of type %T", p)) // unreachable: logFields is fixed
}

// quoteIfNeeded quotes values that are empty or hold spaces, quotes, '=' or non-printables.
func quoteIfNeeded(v string) string {
	if v == "" || strings.ContainsAny(v, " \"=\\") || strconv.Quote(v) != `"`+v+`"` {
		return strconv.Quote(v)
	}
	return v
}
