package tracein_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/tracein"
)

// smallTrace records a real trace of a task with a region, a child
// goroutine and a mutex wait.
func smallTrace(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	ctx, task := trace.NewTask(context.Background(), "request")
	var mu sync.Mutex
	mu.Lock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		trace.WithRegion(ctx, "child", func() { mu.Lock(); mu.Unlock() })
	}()
	time.Sleep(2 * time.Millisecond)
	mu.Unlock()
	wg.Wait()
	task.End()
	trace.Stop()
	return buf.Bytes()
}

func readAll(name string, data []byte) ([]tracein.Event, error) {
	r, err := tracein.NewReader(name, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var evs []tracein.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestReadRealTrace(t *testing.T) {
	evs, err := readAll("small", smallTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[tracein.Kind]bool{tracein.KindSync: true, tracein.KindGoState: true, tracein.KindTaskBegin: true,
		tracein.KindTaskEnd: true, tracein.KindRegionBegin: true, tracein.KindRegionEnd: true}
	var wake bool
	for _, ev := range evs {
		delete(want, ev.Kind)
		if ev.Kind == tracein.KindGoState && ev.From == tracein.Waiting && ev.To == tracein.Runnable && ev.Actor != tracein.NoGoroutine {
			wake = true
		}
	}
	for k := range want {
		t.Errorf("no %v record", k)
	}
	if !wake {
		t.Error("no goroutine-to-goroutine wakeup edge (Waiting→Runnable with an actor)")
	}
}

func TestBadInput(t *testing.T) {
	good := smallTrace(t)
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "empty file", nil},
		{"not a trace", "not a Go execution trace", []byte("module example.com/x\n\ngo 1.26\n")},
		{"truncated", "offset", good[:len(good)/2]},
		{"corrupt", "offset", append(append([]byte{}, good[:40]...), bytes.Repeat([]byte{0xff}, 200)...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll("x.trace", c.data)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.Contains(msg, "x.trace") || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the file and %q", msg, c.want)
			}
		})
	}
}

func TestStacksInterned(t *testing.T) {
	r, err := tracein.NewReader("small", bytes.NewReader(smallTrace(t)))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[tracein.StackID]string{}
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Stack == tracein.NoStack {
			continue
		}
		var b strings.Builder
		for _, f := range r.Stacks().Frames(ev.Stack) {
			b.WriteString(f.Func)
			b.WriteByte(';')
		}
		if prev, ok := seen[ev.Stack]; ok && prev != b.String() {
			t.Fatalf("stack %d changed frames", ev.Stack)
		}
		seen[ev.Stack] = b.String()
	}
	if len(seen) == 0 {
		t.Fatal("no stacks")
	}
}

// FuzzReader feeds arbitrary bytes through the reader and the analyser:
// errors are fine, panics and hangs are not.
func FuzzReader(f *testing.F) {
	good := smallTrace(f)
	f.Add(good)
	f.Add(good[:len(good)/3])
	f.Add(good[:64])
	f.Add([]byte("go 1.26 trace\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := tracein.NewReader("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		a := budget.New(budget.DefaultOptions, r.Stacks())
		for i := 0; i < 1<<20; i++ {
			ev, err := r.Next()
			if err != nil {
				break
			}
			a.Event(&ev)
		}
		a.Finalize()
	})
}
