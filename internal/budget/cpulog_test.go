package budget

import (
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tracein"
)

func TestCPULogWindow(t *testing.T) {
	const s = tracein.Time(time.Second)
	info := TraceInfo{Start: 0, End: 10 * s}
	type log struct {
		at  tracein.Time
		msg string
	}
	for _, tt := range []struct {
		name string
		logs []log
		want time.Duration // 0: no reading
		why  string
		bad  int
	}{
		{"none", nil, 0, "no CPU counter log", 0},
		{"one", []log{{s, "1.5"}}, 0, "1 CPU counter log(s)", 0},
		{"too short a span", []log{{s, "1"}, {3 * s, "2"}}, 0, "span 2.00 s of the 10.00 s window", 0},
		{"whole window", []log{{0, "3"}, {5 * s, "4"}, {10 * s, "5.5"}}, 2500 * time.Millisecond, "", 0},
		{"scaled from 8 of 10 s", []log{{s, "1"}, {9 * s, "5"}}, 5 * time.Second, "", 0},
		{"bad and backwards logs are counted, not used", []log{{0, "2"}, {s, "x"}, {2 * s, "1"}, {10 * s, "4"}}, 2 * time.Second, "", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c CPULog
			for _, l := range tt.logs {
				c.add(l.at, l.msg)
			}
			got, ok, why := c.Window(info)
			if ok != (tt.want > 0) || got != tt.want || !strings.Contains(why, tt.why) || c.Bad != tt.bad {
				t.Errorf("Window = %v, %v, %q (bad %d); want %v, %q (bad %d)", got, ok, why, c.Bad, tt.want, tt.why, tt.bad)
			}
		})
	}
}
