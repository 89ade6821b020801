package jfr

import (
	"testing"
	"time"
)

// TestSettingsChunkOnEventsClock: a chunk's settings are written just
// after it begins, and their times are its ticks converted with the first
// chunk's clock. When that clock runs slow against the wall clock the
// chunk headers' nanoseconds are on (here by 5 ms in 10 s: the JVM's tick
// rate is an estimate), settings written 1 ms into chunk 1 lie before
// chunk 1's Start: placed by Start they joined chunk 0, and a threshold
// lowered while a second recording ran read as lowered from the start
// (TestRecordingLive failed so once in ten runs, 2026-12-05). Placed on the
// events' clock (Recording.clockStart), each chunk keeps its own.
func TestSettingsChunkOnEventsClock(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	const tps = 1_000_000_000
	types := map[int64]string{7: "jdk.SocketWrite"}
	// chunk i begins at wall time t0 + 10·i s; its ticks say 5 ms less per 10 s
	chunk := func(i int) Chunk {
		wall := time.Duration(i) * 10 * time.Second
		return Chunk{Start: t0.Add(wall), Duration: 10 * time.Second, Types: types,
			startTicks: int64(wall - time.Duration(i)*5*time.Millisecond), ticksPerSecond: tps}
	}
	rec := &Recording{Chunks: []Chunk{chunk(0), chunk(1), chunk(2)}}
	s := NewSettings()
	for i, v := range []string{"10 ms", "1 ms", "10 ms"} {
		// 1 ms after the chunk began, on the first chunk's clock
		at := t0.Add(time.Duration(rec.Chunks[i].startTicks) + time.Millisecond)
		if i > 0 && !at.Before(rec.Chunks[i].Start) {
			t.Fatalf("chunk %d's setting at %v is not before its Start %v: the case is not built", i, at, rec.Chunks[i].Start)
		}
		s.Add(&Event{Type: "jdk.ActiveSetting", Start: at, Setting: Setting{TypeID: 7, Name: "threshold", Value: v}}, rec)
		if i == 1 { // the first recording's setting, written with the second's
			s.Add(&Event{Type: "jdk.ActiveSetting", Start: at, Setting: Setting{TypeID: 7, Name: "threshold", Value: "10 ms"}}, rec)
		}
	}
	got := s.Effective(rec, "jdk.SocketWrite", "threshold")
	if want := []string{"10 ms", "1 ms", "10 ms"}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("threshold history %q, want %q", got, want)
	}
	for i := range rec.Chunks {
		if want := t0.Add(time.Duration(rec.Chunks[i].startTicks)); !rec.clockStart(i).Equal(want) {
			t.Errorf("clockStart(%d) = %v, want %v", i, rec.clockStart(i), want)
		}
	}
	// without the headers' ticks (a Chunk built by hand): Start
	hand := &Recording{Chunks: []Chunk{{Start: t0}, {Start: t0.Add(time.Second)}}}
	if got := hand.clockStart(1); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("clockStart without ticks = %v, want the chunk's Start", got)
	}
}
