package sched

import (
	"cmp"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tracein"
)

// TestBursts clusters synthetic wakeup times.
func TestBursts(t *testing.T) {
	ms := tracein.Time(time.Millisecond)
	us := tracein.Time(time.Microsecond)
	names := []string{"", "main.dispatch", "main.handle", "main.serve"}
	spawn := causeKey{kind: CauseCreate, actor: 1, target: 2}
	poll := causeKey{kind: CauseWake, target: 3}
	type ev struct {
		t tracein.Time
		k causeKey
	}
	var evs []ev
	for b := range 5 { // five bursts of 20 creations 10 µs apart, 100 ms apart
		for i := range 20 {
			evs = append(evs, ev{tracein.Time(b)*100*ms + tracein.Time(i)*10*us, spawn})
		}
	}
	for i := range 3 { // three lone poller wakeups between them
		evs = append(evs, ev{tracein.Time(i)*100*ms + 50*ms, poll})
	}
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Compare(a.t, b.t) })
	b := newBursts(Thresholds{BurstGap: time.Millisecond, MinBurst: 16})
	for _, e := range evs {
		b.add(e.t, e.k)
	}
	st, causes := b.finish(8, names)
	want := BurstStats{Gap: time.Millisecond, MinSize: 16, Count: 8, Median: 20, P90: 20, Max: 20, Large: 5, InLarge: 100, LargeMedian: 20, Busiest: 1}
	if st != want {
		t.Errorf("stats\n got %+v\nwant %+v", st, want)
	}
	if len(causes) != 1 || causes[0].Actor != "main.dispatch" || causes[0].Kind != CauseCreate || causes[0].Count != 100 || causes[0].PerBurst != 20 {
		t.Errorf("causes %+v: want only main.dispatch creating main.handle, 20 per burst", causes)
	}
	steady := newBursts(Thresholds{BurstGap: time.Millisecond, MinBurst: 16})
	for i := range 1000 { // one wakeup every 1.5 ms: no bursts at all
		steady.add(tracein.Time(i)*1500*us, poll)
	}
	st, causes = steady.finish(8, names)
	if st.Count != 1000 || st.Large != 0 || len(causes) != 0 || math.Abs(st.Busiest-0.15) > 0.01 {
		t.Errorf("steady stream: %+v, causes %v; want 1000 bursts of 1 and the busiest tenth holding 15 %%", st, causes)
	}
	none := newBursts(DefaultThresholds)
	if st, c := none.finish(8, names); st.Count != 0 || len(c) != 0 || st.Median != 0 {
		t.Errorf("empty: %+v %v", st, c)
	}
}

// TestCauseCountsIndex checks the list's index against a map on many keys
// in a random order, past the list's capacity, and after a reset.
func TestCauseCountsIndex(t *testing.T) {
	var c causeCounts
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := range 3 {
		want := map[causeKey]int64{}
		for range 5000 {
			k := causeKey{kind: CauseKind(rnd.IntN(2)), actor: int32(rnd.IntN(9)), target: int32(rnd.IntN(7))}
			want[k]++
			c.add(k)
		}
		got := map[causeKey]int64{}
		for _, f := range c.few {
			if got[f.k] != 0 {
				t.Fatalf("round %d: %v twice in the list", round, f.k)
			}
			got[f.k] = f.n
		}
		for k, n := range c.many {
			got[k] += n
		}
		if len(c.few) != maxFew || !maps.Equal(got, want) {
			t.Fatalf("round %d: %d in the list, counts %v, want %v", round, len(c.few), got, want)
		}
		c.reset()
	}
}
