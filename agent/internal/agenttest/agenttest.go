// Package agenttest holds what the tests of the agent, of its driver,
// router and metrics packages share: reading the trace a test recorded
// (with golang.org/x/exp/trace: the agent's module cannot use latscope's
// own reader, which lives in the main module), a database/sql driver whose
// statements take the time they name, and small HTTP and CPU helpers.
package agenttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/trace"
	"testing"
	"time"

	xtrace "golang.org/x/exp/trace"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// Kind is the kind of an Event.
type Kind uint8

// The kinds of events Events keeps.
const (
	KindTaskBegin Kind = iota + 1
	KindTaskEnd
	KindRegionBegin
	KindRegionEnd
	KindLog
)

// BackgroundTask is the task of an event outside any task.
const BackgroundTask = uint64(xtrace.BackgroundTask)

// Event is one task, region or log event of a trace.
type Event struct {
	Kind Kind
	Time xtrace.Time
	G    xtrace.GoID
	// Task is the task of a region or log (BackgroundTask outside any), or
	// the task itself for a task's begin and end.
	Task uint64
	// Name is the task's or region's type, or the log's category.
	Name    string
	Message string // a log's message
}

// Events reads the task, region and log events of the trace r, named name
// in errors.
func Events(t testing.TB, name string, r io.Reader) []Event {
	t.Helper()
	tr, err := xtrace.NewReader(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []Event
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e := Event{Time: ev.Time(), G: ev.Goroutine()}
		switch ev.Kind() {
		case xtrace.EventTaskBegin, xtrace.EventTaskEnd:
			e.Kind, e.Task, e.Name = KindTaskBegin, uint64(ev.Task().ID), ev.Task().Type
			if ev.Kind() == xtrace.EventTaskEnd {
				e.Kind = KindTaskEnd
			}
		case xtrace.EventRegionBegin, xtrace.EventRegionEnd:
			e.Kind, e.Task, e.Name = KindRegionBegin, uint64(ev.Region().Task), ev.Region().Type
			if ev.Kind() == xtrace.EventRegionEnd {
				e.Kind = KindRegionEnd
			}
		case xtrace.EventLog:
			e.Kind, e.Task, e.Name, e.Message = KindLog, uint64(ev.Log().Task), ev.Log().Category, ev.Log().Message
		default:
			continue
		}
		out = append(out, e)
	}
}

// FileEvents reads the Events of the trace file at path.
func FileEvents(t testing.TB, path string) []Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Events(t, path, bytes.NewReader(b))
}

// Traced runs fn under runtime/trace and returns the trace's Events.
func Traced(t testing.TB, fn func()) []Event {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	func() {
		defer trace.Stop()
		fn()
	}()
	return Events(t, t.Name(), &buf)
}

// TraceWindow records the runtime's execution trace for length, while
// what the caller started goes on, into a file named name in a temporary
// directory of t, and returns the file's path: the window of a test that
// analyses a live service.
func TraceWindow(t testing.TB, name string, length time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	time.Sleep(length)
	trace.Stop()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Logs returns the log events of category cat.
func Logs(evs []Event, cat string) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Kind == KindLog && ev.Name == cat {
			out = append(out, ev)
		}
	}
	return out
}

// InRegion reports whether the log ev happened inside an open region named
// region on its goroutine.
func InRegion(evs []Event, ev Event, region string) bool {
	depth := map[string]int{}
	for _, e := range evs {
		if e.G != ev.G {
			continue
		}
		switch {
		case e.Kind == KindRegionBegin:
			depth[e.Name]++
		case e.Kind == KindRegionEnd:
			depth[e.Name]--
		case e == ev:
			return depth[region] > 0
		}
	}
	return false
}

// EventCount is what a trace holds.
type EventCount struct {
	Events, Stacks, Tasks int // events, those with a stack, tasks begun
}

// CountEvents counts the events of the trace read from r (named name in
// errors), those with a stack, and the tasks begun.
func CountEvents(name string, r io.Reader) (EventCount, error) {
	tr, err := xtrace.NewReader(r)
	if err != nil {
		return EventCount{}, fmt.Errorf("%s: %w", name, err)
	}
	var c EventCount
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		c.Events++
		if ev.Stack() != xtrace.NoStack {
			c.Stacks++
		}
		if ev.Kind() == xtrace.EventTaskBegin {
			c.Tasks++
		}
	}
}

// ParseAll reads a whole trace with golang.org/x/exp/trace.
func ParseAll(raw []byte) error {
	r, err := xtrace.NewReader(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	for {
		if _, err := r.ReadEvent(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// JobSpan is the request span the SQL tests run under.
var JobSpan, _ = tracelog.ParseTraceParent("00-11111111111111111111111111111111-2222222222222222-01")

// JobContext returns a task context whose request span is JobSpan (what
// agent.ContextWithTraceParent makes).
func JobContext() (context.Context, *trace.Task) {
	ctx, task := trace.NewTask(context.Background(), "job")
	return context.WithValue(ctx, span.Key{}, &span.Info{TP: JobSpan}), task
}

// Allocs is the allocations of one request method path through h, after a
// first request that makes what a route makes once (its name, its
// metrics' observers, a pool's connection).
func Allocs(h http.Handler, method, path string) float64 {
	req := httptest.NewRequest(method, path, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return testing.AllocsPerRun(200, func() {
		w.Body.Reset()
		h.ServeHTTP(w, req)
	})
}

// Burn spends about d of CPU.
func Burn(d time.Duration) {
	var sum [32]byte
	for start := time.Now(); time.Since(start) < d; {
		sum = sha256.Sum256(sum[:])
	}
}

// Get fetches url with c (http.DefaultClient when nil) and the header
// pairs given, and returns the status and body.
func Get(t testing.TB, c *http.Client, url string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, c, req)
}

// do sends req with c (http.DefaultClient when nil) and returns the status
// and body.
func do(t testing.TB, c *http.Client, req *http.Request) (int, []byte) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
