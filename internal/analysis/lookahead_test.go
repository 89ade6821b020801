package analysis

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tracein"
)

// TestHeldEventFields: the lookahead's compact copy of a record
// (heldEvent) must hold every field of tracein.Event but the trace's own
// stacks, which Stacks.Resolve has already turned into StackIDs. A field
// added to tracein.Event fails this test until heldEvent, hold and record
// carry it.
func TestHeldEventFields(t *testing.T) {
	var got []string
	et := reflect.TypeFor[tracein.Event]()
	for i := range et.NumField() {
		got = append(got, et.Field(i).Name)
	}
	want := []string{"Kind", "From", "To", "Time", "G", "Actor", "Thread", "Proc", "Stack", "ActorStack",
		"Task", "Parent", "Name", "Reason", "Message", "Wall", "raw", "rawActor"}
	if !slices.Equal(got, want) {
		t.Fatalf("tracein.Event's fields are %v, the lookahead's heldEvent was written for %v: carry the new ones in heldEvent, hold and record", got, want)
	}
}

// TestLookaheadRoundTrip: the records the lookahead gives back are the
// records it was given, in order, whatever their fields hold.
func TestLookaheadRoundTrip(t *testing.T) {
	wall := time.Date(2026, 12, 5, 6, 0, 0, 123, time.UTC)
	var in []tracein.Event
	for i := range 3000 {
		ev := tracein.Event{
			Kind: tracein.Kind(i % 9), From: tracein.State(i % 6), To: tracein.State((i + 1) % 6),
			Time: tracein.Time(1000 + i), G: tracein.GoID(i % 17), Actor: tracein.GoID(i%5 - 1),
			Thread: int64(i % 7), Proc: int64(i%3 - 1), Stack: tracein.StackID(i % 11), ActorStack: tracein.StackID(i % 13),
			Task: tracein.TaskID(i % 19), Parent: tracein.NoTask,
		}
		if i%4 == 0 {
			ev.Name = "request"
		}
		if i%3 == 0 {
			ev.Reason = "chan receive"
		}
		if i%50 == 0 {
			ev.Message = "message " + string(rune('a'+i%26))
		}
		if i%700 == 0 {
			ev.Wall = wall.Add(time.Duration(i))
		}
		in = append(in, ev)
	}
	l := lookahead{on: true}
	for i := 0; i < len(in); i += 700 { // batches of another size than release's
		l.add(in[i:min(i+700, len(in))], false)
	}
	var out []tracein.Event
	l.release(func(recs []tracein.Event) { out = append(out, recs...) })
	if len(out) != len(in) {
		t.Fatalf("got %d records back, want %d", len(out), len(in))
	}
	for i := range in {
		if !reflect.DeepEqual(out[i], in[i]) {
			t.Fatalf("record %d: got %+v, want %+v", i, out[i], in[i])
		}
	}
}
