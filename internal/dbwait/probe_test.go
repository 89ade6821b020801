package dbwait

import (
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tracein"
	"github.com/latscope/latscope/tracelog"
)

func TestProbeLateIn(t *testing.T) {
	ms := func(n int) tracein.Time { return tracein.Time(time.Duration(n) * time.Millisecond) }
	var p probeLog
	if _, _, ok := p.lateIn(gap{0, ms(100)}); ok {
		t.Fatal("a trace without the probe says something")
	}
	p.add(ms(10), tracelog.FormatProbeOn(tracelog.ProbeEvery, tracelog.ProbeLate))
	p.add(ms(50), tracelog.FormatProbeLate(20*time.Millisecond)) // could not run 30–50 ms
	p.add(ms(90), tracelog.FormatProbeLate(5*time.Millisecond))  // 85–90 ms
	p.add(ms(95), "nonsense")
	for _, tt := range []struct {
		name string
		ivs  []gap
		want time.Duration
	}{
		{"all of it", []gap{{0, ms(100)}}, 25 * time.Millisecond},
		{"a part of one stretch", []gap{{ms(40), ms(60)}}, 10 * time.Millisecond},
		{"two windows around a statement", []gap{{ms(20), ms(35)}, {ms(80), ms(100)}}, 10 * time.Millisecond},
		{"on time", []gap{{ms(55), ms(80)}}, 0},
	} {
		got, _, ok := p.lateIn(tt.ivs...)
		if !ok || got != tt.want {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, ok, tt.want)
		}
	}
	p2 := probeLog{}
	p2.add(ms(900), tracelog.FormatProbeOn(tracelog.ProbeEvery, tracelog.ProbeLate))
	if _, _, ok := p2.lateIn(gap{ms(100), ms(200)}); ok {
		t.Error("a window more than a heartbeat period before the probe's first beat is said to be covered")
	}
	if _, _, ok := p2.lateIn(gap{ms(500), ms(600)}); !ok {
		t.Error("a window within a heartbeat period before the first beat is not covered")
	}
	if p.bad != 1 {
		t.Errorf("%d bad logs counted, want 1", p.bad)
	}
}

// TestProbeExpectedIn: each stall counts its late part and half the
// period before its deadline, overlapped with the intervals.
func TestProbeExpectedIn(t *testing.T) {
	ms := func(n int) tracein.Time { return tracein.Time(time.Duration(n) * time.Millisecond) }
	var p probeLog
	if d := p.expectedIn(gap{0, ms(100)}); d != 0 {
		t.Fatalf("without the probe: %v, want 0", d)
	}
	p.add(ms(10), tracelog.FormatProbeOn(tracelog.ProbeEvery, tracelog.ProbeLate))
	p.add(ms(90), tracelog.FormatProbeLate(40*time.Millisecond)) // late 50–90, expected from 40
	for _, tt := range []struct {
		name string
		ivs  []gap
		want time.Duration
	}{
		{"all of it", []gap{{0, ms(100)}}, 50 * time.Millisecond},
		{"from the expected start", []gap{{ms(40), ms(100)}}, 50 * time.Millisecond},
		{"the last 30 ms", []gap{{ms(70), ms(100)}}, 20 * time.Millisecond},
		{"before it", []gap{{0, ms(40)}}, 0},
		{"two pieces", []gap{{ms(30), ms(45)}, {ms(80), ms(85)}}, 10 * time.Millisecond},
	} {
		if got := p.expectedIn(tt.ivs...); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
