package churn

import (
	"testing"
	"time"
)

// TestClusters: a gap over the threshold ends a burst; Go's median of an
// even count is the lower one, the JVM's the upper one.
func TestClusters(t *testing.T) {
	c := NewClusters(time.Millisecond)
	us := int64(time.Microsecond)
	var closed []int
	at := int64(0)
	for _, size := range []int{3, 20, 1, 17, 40} {
		for i := range size {
			if n := c.Add(at + int64(i)*10*us); n > 0 {
				closed = append(closed, n)
			}
		}
		at += 100 * int64(time.Millisecond)
	}
	closed = append(closed, c.Close())
	if c.Close() != 0 {
		t.Error("a second Close closed a burst")
	}
	if len(closed) != 5 || closed[0] != 3 || closed[4] != 40 {
		t.Errorf("closed %v, want 3 20 1 17 40", closed)
	}
	if large, in := c.Large(16); c.Count() != 5 || c.Max() != 40 || large != 3 || in != 77 {
		t.Errorf("count %d max %d large %d in %d, want 5 40 3 77", c.Count(), c.Max(), large, in)
	}
	c.Add(at) // a fourth large burst: 20, 17, 40, 16
	for i := 1; i < 16; i++ {
		c.Add(at + int64(i)*us)
	}
	c.Close()
	if lo, hi := c.Quantile(0.5, 16), c.UpperMedian(16); lo != 17 || hi != 20 {
		t.Errorf("medians of 16 17 20 40: Go %d, JVM %d; want 17 and 20", lo, hi)
	}
	if m := NewClusters(time.Millisecond); m.Quantile(0.5, 0) != 0 || m.UpperMedian(0) != 0 || m.Max() != 0 {
		t.Error("an empty clustering has a size")
	}
}

// TestTop: heaviest first, ties by name, never nil.
func TestTop(t *testing.T) {
	got := Top(map[string]int64{"b": 2, "a": 2, "c": 5, "d": 1}, 10, 3)
	if len(got) != 3 || got[0] != (Count{"c", 5, 0.5}) || got[1].Frame != "a" || got[2].Frame != "b" {
		t.Errorf("Top = %v", got)
	}
	if got := Top(nil, 0, 3); got == nil || len(got) != 0 {
		t.Errorf("Top(nil) = %#v, want empty and not nil", got)
	}
}

// TestWords: the shared texts keep each runtime's bytes.
func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{GoNouns.OptionBatch(), "batching: hand a worker a slice of items per wakeup, not one item"},
		{GoNouns.OptionSteady(), "a steady consumer: route the bursty work to goroutines that are busy anyway (the seed moved its actor to the steady dispatcher)"},
		{JVMNouns.OptionBatch(), "batching: hand a task a batch of events per wakeup (one execute per burst), not one task per event"},
		{JVMNouns.OptionSteady(), "a steady consumer: route the bursty work to threads that are busy anyway (the seed moved its actor to the steady dispatcher)"},
		{IntervalWords(0.123, 0.2749, 100), "95 % interval 12.3–27.5 %, 100 samples"},
		{InsteadOfWork("parking"), " — parking instead of running the work"},
		{PaidOn([]string{"a (3 %)", "b (1 %)"}), "; paid on the stacks of a (3 %), b (1 %)"},
		{PaidOn(nil), ""},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
