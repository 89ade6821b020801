package hostsig

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// notInLog is the absence reason of a source that a log line neither reports nor excuses.
const notInLog = "not in log"

// ParseLog decodes the text of Sample.MarshalText. Unknown keys are ignored, so later
// versions may add fields; a source with some but not all of its keys is an error. Keys
// added later (ncpu) are optional: without one, its field is 0 (unknown).
func ParseLog(text string) (Sample, error) {
	kv, err := splitKV(text)
	if err != nil {
		return Sample{}, fmt.Errorf("parse %s log: %w", LogCategory, err)
	}
	var s Sample
	var have, haveOpt [NumSources + 1]int // keys found per source (required, optional); header last
	for _, f := range logFields {
		v, ok := kv[f.key]
		if !ok {
			continue
		}
		if err := parseValue(f.ptr(&s), v); err != nil {
			return Sample{}, fmt.Errorf("parse %s log: %s: %w", LogCategory, f.key, err)
		}
		if f.optional() {
			if n := *f.ptr(&s).(*int); n <= 0 {
				return Sample{}, fmt.Errorf("parse %s log: %s: %d, want at least 1 (leave it out when unknown)", LogCategory, f.key, n)
			}
			haveOpt[f.src]++
			continue
		}
		have[f.src]++
	}
	if err := checkSources(&s, kv, have, haveOpt); err != nil {
		return Sample{}, fmt.Errorf("parse %s log: %w", LogCategory, err)
	}
	return s, nil
}

// checkSources decides, per source, whether it is present, excused or incomplete. Optional
// keys (haveOpt) do not make a source complete, but they do report it.
func checkSources(s *Sample, kv map[string]string, have, haveOpt [NumSources + 1]int) error {
	var want [NumSources + 1]int
	for _, f := range logFields {
		if !f.optional() {
			want[f.src]++
		}
	}
	for _, k := range []string{"mono", "wall", "pid"} {
		if _, ok := kv[k]; !ok {
			return fmt.Errorf("no %s", k)
		}
	}
	for src := range NumSources {
		reason, excused := kv[absentPrefix+src.String()]
		switch {
		case excused && have[src]+haveOpt[src] > 0:
			return fmt.Errorf("%s both reported and absent", src)
		case excused && reason == "":
			return fmt.Errorf("%s absent without a reason", src)
		case excused:
			s.Absent[src] = reason
		case have[src] == 0 && haveOpt[src] > 0:
			return fmt.Errorf("%s has only its optional keys", src)
		case have[src] == 0:
			s.Absent[src] = notInLog
		case have[src] < want[src]:
			return fmt.Errorf("%s has %d of its %d keys", src, have[src], want[src])
		}
	}
	return nil
}

// splitKV splits "k=v k="quoted v"" into a map, rejecting duplicate keys.
func splitKV(text string) (map[string]string, error) {
	kv := make(map[string]string, len(logFields))
	rest := strings.TrimLeft(text, " ")
	for rest != "" {
		k, after, ok := strings.Cut(rest, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \"") {
			return nil, fmt.Errorf("offset %d: expected key=value", len(text)-len(rest))
		}
		v, tail, err := cutValue(after)
		if err != nil {
			return nil, fmt.Errorf("offset %d: %s: %w", len(text)-len(rest), k, err)
		}
		if _, dup := kv[k]; dup {
			return nil, fmt.Errorf("offset %d: %s given twice", len(text)-len(rest), k)
		}
		kv[k] = v
		rest = strings.TrimLeft(tail, " ")
	}
	return kv, nil
}

// cutValue takes one value, quoted or bare, off the front of s.
func cutValue(s string) (v, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		v, rest, _ = strings.Cut(s, " ")
		return v, rest, nil
	}
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", fmt.Errorf("bad quoted value: %w", err)
	}
	v, err = strconv.Unquote(q)
	if err != nil {
		return "", "", fmt.Errorf("bad quoted value: %w", err)
	}
	rest = s[len(q):]
	if rest != "" && rest[0] != ' ' {
		return "", "", fmt.Errorf("no space after quoted value")
	}
	return v, rest, nil
}

func parseValue(p any, v string) error {
	var err error
	switch p := p.(type) {
	case *time.Duration:
		var n int64
		n, err = strconv.ParseInt(v, 10, 64)
		*p = time.Duration(n)
	case *time.Time:
		var n int64
		n, err = strconv.ParseInt(v, 10, 64)
		*p = time.Unix(0, n)
	case *uint64:
		*p, err = strconv.ParseUint(v, 10, 64)
	case *int:
		*p, err = strconv.Atoi(v)
	case *string:
		*p = v
	case *CgroupVersion:
		*p, err = parseCgroupVersion(v)
	}
	return err
}

func parseCgroupVersion(v string) (CgroupVersion, error) {
	for i, name := range cgroupVersionNames {
		if v == name {
			return CgroupVersion(i), nil
		}
	}
	return NoCgroup, fmt.Errorf("cgroup version %q", v)
}
