package dbhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReadErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "f: empty"},
		{"hello\n", "f:1: \"hello\" is not a latscope dbhost recording"},
		{Header + " period_ns=0\n", "f:1: period_ns \"0\""},
		{Header + " period_ns=10\n", "f: no samples"},
		{Header + " period_ns=10\n1 2\n", "f:2: 2 fields"},
		{Header + " period_ns=10\n1 2 -3\n", "f:2: field 3 \"-3\""},
		{Header + " period_ns=10\n5 0 0\n4 0 0\n", "f:3: time 4 is before"},
		{Header + " period_ns=10\n" + strings.Repeat("9", 5000) + "\n", "f: bufio.Scanner: token too long"},
		{Header + " period_ns=10\n5 0 0\n6 7 1", "f:3: the last line is cut off"},
		{Header + " period_ns=10", "f:1: the last line is cut off"},
	} {
		_, err := Read("f", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%.30q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func TestIn(t *testing.T) {
	ms := int64(time.Millisecond)
	rec := Header + " period_ns=10000000\n" +
		"1000000000 0 0\n" +
		"1000000000 7 100\n" +
		"1030000000 7 5000100\n" + // 5 ms waited in (1.020, 1.030]
		"1090000000 7 25000100\n" + // 20 ms in (1.080, 1.090]
		"1100000000 9 5000000\n" +
		"1200000000 9 100\n" + // PID 9 again, another process
		"1500000000 7 25000100\n" +
		"1600000000 7 95000100\n" + // 70 ms written by a pass 90 ms late
		"1600000000 0 90000000\n" +
		"2000000000 0 0\n"
	w, err := Read("f", strings.NewReader(rec))
	if err != nil {
		t.Fatal(err)
	}
	at := func(n int64) time.Time { return time.Unix(0, n*ms) }
	for _, c := range []struct {
		pid      int
		from, to int64 // ms
		want     time.Duration
		ok       bool
	}{
		{7, 1000, 1025, 5 * time.Millisecond, true},  // the sample after to counts
		{7, 1030, 1070, 0, true},                     // nothing moved
		{7, 1030, 1085, 20 * time.Millisecond, true}, // a wait ending in the window
		{7, 1000, 1990, 95 * time.Millisecond, true},
		{7, 1520, 1560, 70 * time.Millisecond, true}, // the late pass after to counts
		{7, 1500, 1505, 0, true},                     // a gap beginning after to does not
		{7, 999, 1010, 0, false},                     // before the recording
		{7, 1610, 1990, 0, true},                     // covered to the end
		{7, 1500, 1999, 0, false},                    // to + period past the end
		{8, 1000, 1010, 0, false},                    // never seen
		{9, 1100, 1195, 0, false},                    // its counter went back
	} {
		got, ok := w.In(c.pid, at(c.from), at(c.to))
		if got != c.want || ok != c.ok {
			t.Errorf("In(%d, %d, %d) = %v, %v; want %v, %v", c.pid, c.from, c.to, got, ok, c.want, c.ok)
		}
	}
	// Cover says why there is no answer.
	for _, c := range []struct {
		pid      int
		from, to int64 // ms
		want     Miss
	}{
		{7, 1000, 1025, Covered},
		{7, 999, 1010, OutsideTime},
		{7, 1500, 1999, OutsideTime},
		{8, 1000, 1010, NoBackend},
		{8, 999, 1010, OutsideTime}, // the time first: a recording of another time holds none of the backends
		{9, 1050, 1150, SeenLate},
		{9, 1100, 1195, WentBack},
		{7, 1100, 1050, EmptyWindow},
	} {
		if _, got := w.Cover(c.pid, at(c.from), at(c.to)); got != c.want {
			t.Errorf("Cover(%d, %d, %d) = %v, want %v", c.pid, c.from, c.to, got, c.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add(Header + " period_ns=10000000\n1000 0 0\n1000 7 100\n2000 7 300\n")
	f.Add(Header + " period_ns=1\n")
	f.Add("latscope-dbhost 2 period_ns=5\n1 1 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		w, err := Read("f", strings.NewReader(in))
		if err != nil {
			if w != nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q with a result or on several lines", err)
			}
			return
		}
		if w.From.After(w.To) || w.Period <= 0 {
			t.Fatalf("recording %v–%v, period %v", w.From, w.To, w.Period)
		}
		for pid := range w.byPID {
			w.In(pid, w.From, w.To)
		}
		// read for the middle half, it answers for windows inside as read whole
		span := w.To.Sub(w.From)
		lo, hi := w.From.Add(span/4), w.From.Add(3*span/4)
		part, err := ReadWindow(context.Background(), "f", strings.NewReader(in), lo, hi)
		if err != nil {
			t.Fatalf("read whole, but for a window: %v", err)
		}
		for pid := range w.byPID {
			for _, win := range [][2]time.Time{{lo, hi}, {lo, lo.Add(span / 8)}, {lo.Add(span / 8), hi}} {
				if w.nextPass(win[1]).After(hi) {
					continue // the pass answering for it is beyond the window read
				}
				w1, m1 := w.Cover(pid, win[0], win[1])
				w2, m2 := part.Cover(pid, win[0], win[1])
				if w1 != w2 || m1 != m2 {
					t.Fatalf("Cover(%d, %v, %v): whole %v %v, window %v %v", pid, win[0], win[1], w1, m1, w2, m2)
				}
			}
		}
	})
}

// TestReadContext: a read stops once the context is done, with an error
// naming the line, not a parse of the line it cut.
func TestReadContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := io.MultiReader(strings.NewReader(Header+" period_ns=10000000\n1000 0 0\n10"), readerFunc(func(p []byte) (int, error) {
		cancel()
		return 0, nil
	}), strings.NewReader("00 7 100\n"))
	_, err := ReadContext(ctx, "f", r)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "f:3: ") {
		t.Fatalf("err = %v, want context.Canceled at f:3", err)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestReadWindow: a recording read for a window answers every question
// about windows inside it as the whole recording does, keeping only about
// the window's lines.
func TestReadWindow(t *testing.T) {
	var b strings.Builder
	b.WriteString(Header + " period_ns=10000000\n")
	const ms = int64(time.Millisecond)
	wait := map[int]int64{}
	lines := 0
	for at := int64(1000); at <= 100_000; at += 10 {
		if at%1000 == 0 {
			fmt.Fprintf(&b, "%d 0 0\n", at*ms)
		}
		if at%770 == 0 {
			fmt.Fprintf(&b, "%d 0 %d\n", at*ms, 40*ms) // a late pass
		}
		for pid := 7; pid < 10; pid++ {
			switch {
			case pid == 9 && at < 40_500: // seen late
			case pid == 8 && at == 40_600: // taken by another process
				wait[pid] = 0
				fmt.Fprintf(&b, "%d %d %d\n", at*ms, pid, 0)
			case (at/10+int64(pid))%3 == 0:
				wait[pid] += int64(pid) * 100_000
				fmt.Fprintf(&b, "%d %d %d\n", at*ms, pid, wait[pid])
				lines++
			}
		}
	}
	at := func(n int64) time.Time { return time.Unix(0, n*ms) }
	whole, err := Read("f", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	part, err := ReadWindow(context.Background(), "f", strings.NewReader(b.String()), at(40_000), at(41_000))
	if err != nil {
		t.Fatal(err)
	}
	if part.From != whole.From || part.To != whole.To || part.Backends() != whole.Backends() || part.Period != whole.Period {
		t.Errorf("window: %v–%v, %d backends, period %v; whole: %v–%v, %d, %v", part.From, part.To, part.Backends(), part.Period, whole.From, whole.To, whole.Backends(), whole.Period)
	}
	kept := len(part.late)
	for _, pts := range part.byPID {
		kept += len(pts)
	}
	if kept > lines/50 {
		t.Errorf("kept %d points of %d for 1 s of 99", kept, lines)
	}
	for pid := 6; pid < 10; pid++ {
		for from := int64(40_000); from < 41_000; from += 7 {
			for _, d := range []int64{0, 3, 25, 130, 990} {
				if from+d > 41_000 {
					continue
				}
				w1, m1 := whole.Cover(pid, at(from), at(from+d))
				w2, m2 := part.Cover(pid, at(from), at(from+d))
				if w1 != w2 || m1 != m2 {
					t.Fatalf("Cover(%d, %d, %d): whole %v %v, window %v %v", pid, from, from+d, w1, m1, w2, m2)
				}
			}
		}
	}
}

// TestPlace: a backend's wait is placed before, during or after the
// statement's timer by the pass that counted it, and the three sum to In.
func TestPlace(t *testing.T) {
	ms := int64(time.Millisecond)
	rec := Header + " period_ns=10000000\n" +
		"1000000000 0 0\n" +
		"1000000000 7 0\n" +
		"1280000000 7 276000000\n" + // 276 ms waited, ending as the backend read the query (timer at 1.275)
		"1940000000 7 277000000\n" + // 1 ms inside the timer (a lock sleep is no run-queue wait)
		"1960000000 7 289000000\n" + // 12 ms ending after the timer stopped (1.945)
		"2000000000 0 0\n"
	w, err := Read("f", strings.NewReader(rec))
	if err != nil {
		t.Fatal(err)
	}
	at := func(n int64) time.Time { return time.Unix(0, n*ms) }
	for _, c := range []struct {
		name                  string
		from, start, end, to  int64 // ms
		before, during, after time.Duration
		miss                  Miss
	}{
		{"a lock waiter read its query late", 1000, 1275, 1945, 1980, 276 * time.Millisecond, time.Millisecond, 12 * time.Millisecond, Covered},
		{"all inside the timer", 1000, 1005, 1945, 1980, 0, 277 * time.Millisecond, 12 * time.Millisecond, Covered},
		{"a statement shorter than a period", 1000, 1275, 1277, 1280, 276 * time.Millisecond, 0, 0, Covered},
		{"outside the recording", 999, 1275, 1945, 1980, 0, 0, 0, OutsideTime},
	} {
		p, miss := w.Place(7, at(c.from), at(c.start), at(c.end), at(c.to))
		if p != (Placement{c.before, c.during, c.after}) || miss != c.miss {
			t.Errorf("%s: Place = %+v, %v; want %v/%v/%v, %v", c.name, p, miss, c.before, c.during, c.after, c.miss)
		}
		if in, ok := w.In(7, at(c.from), at(c.to)); ok && in != p.Before+p.During+p.After {
			t.Errorf("%s: placed %+v, In %v", c.name, p, in)
		}
	}
}
