package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a size flag: a number with an optional binary unit (KB, MB,
// GB, also spelt KiB, MiB, GiB; all powers of 1024).
type byteSize int64

var units = []struct {
	suffix string
	mult   int64
}{
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30},
	{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// String formats the size in the largest whole unit.
func (s byteSize) String() string {
	switch {
	case s >= 1<<30 && s%(1<<30) == 0:
		return fmt.Sprintf("%dGB", s>>30)
	case s >= 1<<20 && s%(1<<20) == 0:
		return fmt.Sprintf("%dMB", s>>20)
	}
	return strconv.FormatInt(int64(s), 10)
}

// Set parses a size such as 100MB or 1GB.
func (s *byteSize) Set(v string) error {
	u := strings.ToUpper(strings.TrimSpace(v))
	mult := int64(1)
	for _, x := range units {
		if strings.HasSuffix(u, x.suffix) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, x.suffix)), x.mult
			break
		}
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil || f <= 0 {
		return fmt.Errorf("size %q: want a positive number with an optional unit KB, MB or GB", v)
	}
	*s = byteSize(f * float64(mult))
	return nil
}
