package jfr

import (
	"strconv"
	"strings"
	"time"
)

// Settings collects jdk.ActiveSetting events by chunk. At a chunk's start
// the JVM writes the settings of every running recording, and what it
// records is their combination: the lowest threshold, enabled if any
// recording enables the event.
type Settings struct {
	values  map[settingKey][]string
	types   map[string]bool
	unnamed int // settings whose event type id no chunk names
}

type settingKey struct {
	chunk     int
	typ, name string
}

// NewSettings returns an empty collection.
func NewSettings() Settings {
	return Settings{values: map[settingKey][]string{}, types: map[string]bool{}}
}

// Add adds a jdk.ActiveSetting event of the recording rec.
func (s *Settings) Add(ev *Event, rec *Recording) {
	typ := rec.TypeName(ev.Setting.TypeID)
	if typ == "" {
		s.unnamed++
		return
	}
	k := settingKey{chunk: chunkOf(rec, ev.Start), typ: typ, name: ev.Setting.Name}
	s.values[k] = append(s.values[k], ev.Setting.Value)
	s.types[typ] = true
}

// chunkOf returns the index of the chunk that was being written at t, a
// time on the events' clock (Recording.clockStart).
func chunkOf(rec *Recording, t time.Time) int {
	i := 0
	for j := range rec.Chunks {
		if !rec.clockStart(j).After(t) {
			i = j
		}
	}
	return i
}

// Effective returns the combined value of setting name of event type typ in
// each chunk that has it, dropping repeats: one value unless it changed
// while recording.
func (s *Settings) Effective(rec *Recording, typ, name string) []string {
	var out []string
	for i := range rec.Chunks {
		vs := s.values[settingKey{chunk: i, typ: typ, name: name}]
		if len(vs) == 0 {
			continue
		}
		v := combine(name, vs)
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// Has reports whether a chunk has a setting of event type typ.
func (s *Settings) Has(typ string) bool { return s.types[typ] }

// Empty reports whether no setting of a named event type was added: the
// recording had no jdk.ActiveSetting events.
func (s *Settings) Empty() bool { return len(s.types) == 0 }

// Shortest returns the shortest positive timespan any recording set for
// setting name of event type typ in any chunk ("period" of
// jdk.ExecutionSample: the sampling period), or 0 when none is set.
func (s *Settings) Shortest(typ, name string) time.Duration {
	var best time.Duration
	for k, vs := range s.values {
		if k.typ != typ || k.name != name {
			continue
		}
		for _, v := range vs {
			if d, ok := thresholdValue(v); ok && d > 0 && (best == 0 || d < best) {
				best = d
			}
		}
	}
	return best
}

// combine merges the values of several recordings the way JFR does for the
// settings latscope reads.
func combine(name string, vs []string) string {
	switch name {
	case "enabled":
		for _, v := range vs {
			if v == "true" {
				return "true"
			}
		}
		return "false"
	case "threshold":
		best, bestD := vs[0], time.Duration(-1)
		for _, v := range vs {
			if d, ok := thresholdValue(v); ok && (bestD < 0 || d < bestD) {
				best, bestD = v, d
			}
		}
		return best
	}
	return vs[len(vs)-1]
}

// thresholdUnits are the units of JFR's timespan settings.
var thresholdUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
	"m": time.Minute, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

// thresholdValue parses a JFR timespan setting such as "10 ms", "0 ns", "1 s".
func thresholdValue(s string) (time.Duration, bool) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), " ")
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	if n == 0 {
		return 0, true
	}
	u, ok := thresholdUnits[unit]
	if !ok || n > int64(1<<62)/int64(u) {
		return 0, false
	}
	return time.Duration(n) * u, true
}
