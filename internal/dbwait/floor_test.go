package dbwait

import (
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
)

func TestReweigh(t *testing.T) {
	ms := time.Millisecond
	onTime := func(d time.Duration) Query {
		return Query{Outside: d, Verdict: Network, Confidence: High, Evidence: Evidence{Probe: true}}
	}
	floorOf := []Query{onTime(30 * ms), onTime(31 * ms), onTime(30 * ms), onTime(32 * ms), onTime(29 * ms)}
	floor, n := networkFloor(floorOf)
	if floor != 30*ms || n != 5 {
		t.Fatalf("networkFloor = %v of %d, want 30ms of 5", floor, n)
	}
	if f, _ := networkFloor(floorOf[:4]); f != 0 {
		t.Errorf("networkFloor of 4 statements = %v, want 0 (too few)", f)
	}
	// under a quota the counters move in every interval: no statement is
	// network with high confidence, and the probe's own ones make the floor
	var medium []Query
	for _, d := range []time.Duration{40, 41, 40, 42, 39, 45} {
		medium = append(medium, Query{Outside: d * ms, Verdict: Network, Confidence: Medium, Evidence: Evidence{Probe: true}})
	}
	medium = append(medium, onTime(30*ms), Query{Outside: 90 * ms, Verdict: Network, Confidence: Low})
	if f, n := networkFloor(medium); f != 40*ms || n != 7 {
		t.Errorf("networkFloor without 5 high = %v of %d, want 40ms of 7 (medium and high, not low)", f, n)
	}
	for _, tc := range []struct {
		name    string
		q       Query
		want    Verdict
		changed bool
	}{
		{"a stall over the whole 39 ms, floor 30: network", Query{Outside: 39 * ms, Verdict: Throttled, Evidence: Evidence{Probe: true}}, Network, true},
		{"70 ms, floor 30: mixed", Query{Outside: 70 * ms, Verdict: Throttled, Evidence: Evidence{Probe: true}}, Mixed, true},
		{"100 ms, floor 30: throttled stands", Query{Outside: 100 * ms, Verdict: Throttled, Evidence: Evidence{Probe: true}}, Throttled, false},
		{"no probe: stands", Query{Outside: 39 * ms, Verdict: Throttled}, Throttled, false},
		{"mixed within the floor's share: network", Query{Outside: 38 * ms, Verdict: Mixed, Evidence: Evidence{Probe: true}}, Network, true},
		{"network stays network", Query{Outside: 35 * ms, Verdict: Network, Evidence: Evidence{Probe: true}}, Network, false},
		{"within the floor: network", Query{Outside: 25 * ms, Verdict: Runnable, Evidence: Evidence{Probe: true}}, Network, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Rule = "before"
			reweigh(&q, floor, n)
			if q.Verdict != tc.want || (q.Rule != "before") != tc.changed {
				t.Errorf("reweigh = %v (%s), want %v (changed %v)", q.Verdict, q.Rule, tc.want, tc.changed)
			}
		})
	}
}

// TestRefloor: a network or mixed verdict whose wait past the trace's
// network floor the probe's stalls explain (to within the threshold, or
// half of it or more) is
// split by the shares, floor to the network and the rest to a CPU cause;
// anything else stands.
func TestRefloor(t *testing.T) {
	ms := time.Millisecond
	const floor = 26 * time.Millisecond
	quota := &hostsig.Delta{Interval: 200 * ms, Throttled: 2, ThrottledTime: 170 * ms, CgroupSome: 150 * ms}
	flat := &hostsig.Delta{Interval: 200 * ms}
	q := func(outside, stall time.Duration, v Verdict, d *hostsig.Delta) Query {
		return Query{Outside: outside, Verdict: v, Evidence: Evidence{Probe: true, FloorStall: stall, Host: d}}
	}
	for _, tc := range []struct {
		name string
		q    Query
		want Verdict
	}{
		{"a stall ended 3 ms before the answer, past the floor: throttled", q(100*ms, 70*ms, Network, quota), Throttled},
		{"the stalls explain 60 of the 74 ms past the floor, the process could run for 40 of 100: mixed", q(100*ms, 60*ms, Network, quota), Mixed},
		{"the stalls explain under half of the 74 past the floor: stands", q(100*ms, 36*ms, Network, quota), Network},
		{"floor and rest each a third or more: mixed", q(70*ms, 40*ms, Network, quota), Mixed},
		{"probe-mixed, the rest past the floor two thirds: throttled", q(100*ms, 70*ms, Mixed, quota), Throttled},
		{"within the floor and the threshold: stands", q(34*ms, 8*ms, Network, quota), Network},
		{"no probe: stands", Query{Outside: 100 * ms, Verdict: Network, Evidence: Evidence{FloorStall: 74 * ms, Host: quota}}, Network},
		{"a CPU verdict stands (reweigh weighs it)", q(100*ms, 74*ms, Runnable, quota), Runnable},
		{"no counter moved: the stall alone decides nothing new", q(100*ms, 74*ms, Network, flat), Network},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Rule = "before"
			refloor(&q, floor, 9, false, Options{})
			if q.Verdict != tc.want {
				t.Errorf("refloor = %v (%s), want %v", q.Verdict, q.Rule, tc.want)
			}
			if changed := q.Rule != "before"; changed != (tc.want != tc.q.Verdict) {
				t.Errorf("rule %q: changed %v, verdict %v→%v", q.Rule, changed, tc.q.Verdict, q.Verdict)
			}
			if q.Verdict != tc.q.Verdict && q.Confidence > Medium {
				t.Errorf("confidence %v: a verdict the floor decided is at most medium", q.Confidence)
			}
		})
	}
	// no network floor: the usual statement's difference (inside the
	// database) takes its place
	if q := (Query{Outside: 100 * ms, Verdict: Network, Evidence: Evidence{Probe: true, FloorStall: 92 * ms, Host: quota}}); true {
		refloor(&q, 300*time.Microsecond, 250, true, Options{})
		if q.Verdict != Throttled || !strings.Contains(q.Rule, "usually waited 0.3 ms outside the database (median of all 250)") {
			t.Errorf("past the usual difference: %v (%s), want throttled, said so", q.Verdict, q.Rule)
		}
	}
	if q := (Query{Outside: 100 * ms, Verdict: Network, Evidence: Evidence{Probe: true, FloorStall: 74 * ms, Host: quota}}); true {
		refloor(&q, 0, 0, false, Options{})
		if q.Verdict != Network {
			t.Errorf("without a floor: %v, want the verdict to stand", q.Verdict)
		}
	}
}

// TestFloorShared: a floor stands only when nearly every statement waited
// that long outside the database.
func TestFloorShared(t *testing.T) {
	ms := time.Millisecond
	qs := func(ds ...time.Duration) []Query {
		var out []Query
		for _, d := range ds {
			out = append(out, Query{Outside: d * ms})
		}
		return out
	}
	proxy := qs(25, 26, 26, 25, 27, 26, 40, 90, 26, 25)
	if ok, tenth := floorShared(proxy, 26*ms, 10*ms); !ok || tenth != 25*ms {
		t.Errorf("every statement behind a 25 ms proxy: %v (tenth %v), want the floor to stand", ok, tenth)
	}
	// under a quota, most statements inside and a few called network
	quota := qs(0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 60, 70, 69, 12, 97, 75, 80, 33)
	if ok, _ := floorShared(quota, 69*ms, 10*ms); ok {
		t.Error("a floor of 69 ms under a quota where most statements took under 1 ms stands")
	}
}

// TestSettleFloor: a floor the statements do not share gives way to the
// tenth-fastest difference when that is outside the database, else to none.
func TestSettleFloor(t *testing.T) {
	ms := time.Millisecond
	qs := func(ds ...time.Duration) []Query {
		var out []Query
		for _, d := range ds {
			out = append(out, Query{Outside: d * ms})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		qs        []Query
		floor     time.Duration
		want      time.Duration
		wantWords string
	}{
		{"behind a proxy: stands", qs(25, 26, 26, 25, 27, 26, 40, 90, 26, 25), 26 * ms, 26 * ms, ""},
		{"a starved proxy: the tenth-fastest", qs(27, 30, 45, 50, 60, 45, 48, 52, 44, 46), 46 * ms, 27 * ms, "network floor 27ms, the tenth-fastest difference"},
		{"under a quota: none", qs(0, 0, 1, 0, 0, 1, 0, 0, 60, 70), 69 * ms, 0, "no network floor"},
		{"no floor to settle", qs(0, 1), 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, warn := settleFloor(tc.qs, tc.floor, 8, 10*ms)
			if got != tc.want || (warn == nil) != (tc.wantWords == "") || warn != nil && !strings.HasPrefix(warn.Error(), tc.wantWords) {
				t.Errorf("settleFloor = %v, %v; want %v, %q", got, warn, tc.want, tc.wantWords)
			}
		})
	}
}
