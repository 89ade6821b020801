package dbwait_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/dbwait"
)

// TestDBHostWaitPlaced (issue 34, item 3): the kept lock capture's lock
// waiter, with a recording of its backend that waited on the run queue
// for as long as the span had before the database's timer started (none
// here: the statement's start is logged to the millisecond) and after it
// stopped, and 1 ms inside the timer. The recording places the waits
// outside the timer; the lock sleep of about a second is no run-queue
// wait and cancels none of them, as the span's wait less the statement's
// duration did (0 here). dbhost's TestPlace places the 276 ms
// wait before a lock sleep.
func TestDBHostWaitPlaced(t *testing.T) {
	c := loadCapture(t, "lock")
	ref := analyse(t, "lock", dbwait.Options{})
	q := longest(ref, func(q dbwait.Query) time.Duration { return q.DB })
	if q.DB < 500*time.Millisecond || !q.Evidence.Placed || q.PID == 0 {
		t.Fatalf("the lock waiter: DB %v, placed %v, PID %d", q.DB, q.Evidence.Placed, q.PID)
	}
	before, after := max(q.Evidence.BeforeDB, 0), max(q.Evidence.AfterDB, 0)
	t.Logf("lock waiter: DB %v, outside %v: %v before the timer, %v after", q.DB, q.Outside, q.Evidence.BeforeDB, q.Evidence.AfterDB)
	first, last := ref.Queries[0].StartWall, ref.Queries[len(ref.Queries)-1].StartWall
	type line struct {
		at   time.Time
		pid  int
		wait time.Duration
	}
	lines := []line{{first.Add(-time.Second), q.PID, 0}}
	for at := first.Add(-time.Second); !at.After(last.Add(time.Second)); at = at.Add(100 * time.Millisecond) {
		lines = append(lines, line{at, 0, 0})
	}
	lines = append(lines,
		line{q.DBStart.Add(5 * time.Millisecond), q.PID, before},                          // ended as the timer started
		line{q.DBStart.Add(q.DB / 2), q.PID, before + time.Millisecond},                   // inside the timer
		line{q.DBEnd.Add(5 * time.Millisecond), q.PID, before + time.Millisecond + after}) // after it stopped
	slices.SortStableFunc(lines, func(a, b line) int { return a.at.Compare(b.at) })
	var b strings.Builder
	fmt.Fprintf(&b, "%s period_ns=%d\n", dbhost.Header, 10*time.Millisecond)
	for _, l := range lines {
		fmt.Fprintf(&b, "%d %d %d\n", l.at.UnixNano(), l.pid, l.wait)
	}
	res := withRecording(t, c, b.String(), false)
	for _, got := range res.Queries {
		if got.TraceParent != q.TraceParent || got.Start != q.Start {
			continue
		}
		if !got.Evidence.DBHost {
			t.Fatalf("the recording does not cover the lock waiter: %v", res.Warnings)
		}
		// the span's wait less the statement's duration would be 0
		if want := min(before+after, got.Outside); got.Evidence.DBHostWait != want || want <= 0 {
			t.Errorf("DB-host wait %v, want the %v before the timer and the %v after it, at most the %v outside (DB %v)", got.Evidence.DBHostWait, before, after, got.Outside, got.DB)
		}
		return
	}
	t.Fatal("the lock waiter is not in the result with the recording")
}
