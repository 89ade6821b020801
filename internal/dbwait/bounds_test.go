package dbwait_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
)

// peakHeap runs fn and returns the most heap (bytes in live and unswept
// objects) seen while it ran, sampled every millisecond.
func peakHeap(t *testing.T, fn func()) uint64 {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	var mu sync.Mutex
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	return peak
}

// genReader produces lines from next(i) lazily until it has produced
// size bytes (the last line whole), never holding more than one line.
type genReader struct {
	size, n int64
	i       int
	next    func(i int) []byte
	buf     []byte
}

func (g *genReader) Read(p []byte) (int, error) {
	if len(g.buf) == 0 {
		if g.n >= g.size {
			return 0, io.EOF
		}
		g.buf = g.next(g.i)
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	g.n += int64(n)
	return n, nil
}

// otherStatement is a jsonlog statement line of another time, with a
// traceparent no span of the lab's traces has, and a long SQL text.
func otherStatement(i int) []byte {
	return fmt.Appendf(nil, `{"timestamp":"2026-12-01 09:%02d:%02d.%03d UTC","user":"postgres","dbname":"postgres","pid":%d,"session_id":"6b1051b6.6e8","line_num":%d,"error_severity":"LOG","message":"duration: 0.250 ms  statement: /*traceparent='00-%032x-%016x-01'*/ SELECT val FROM dbwait_items WHERE id = '%d' AND note = '%s' ","backend_type":"client backend","query_id":0}`+"\n",
		i/60000%60, i/1000%60, i%1000, 1000+i%50, i, i+1, i+1, i, strings.Repeat("x", 200))
}

// TestPGLogMemoryBounded (issue 29, item 11): a log of hundreds of MB whose
// statements belong to no span of the trace is streamed: the heap stays
// bounded by the spans, not the log, and the join is the same.
func TestPGLogMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 160 MB of generated log")
	}
	c := loadCapture(t, "pause")
	want := analyse(t, "pause", dbwait.Options{})
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "pause.trace", c.trace)
	const size = 160 << 20
	gen := &genReader{size: size, next: otherStatement}
	var err error
	peak := peakHeap(t, func() {
		err = dbwait.FeedPGLog(a, pglog.NewReader(io.MultiReader(gen, bytes.NewReader(c.pglog))))
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d MB of log, %d statements: peak heap %d MB", size>>20, res.Summary.Statements, peak>>20)
	if len(res.Queries) != len(want.Queries) {
		t.Errorf("%d queries joined, want %d", len(res.Queries), len(want.Queries))
	}
	if res.Summary.Statements < gen.i {
		t.Errorf("%d statements counted, want at least the %d generated", res.Summary.Statements, gen.i)
	}
	if peak > 100<<20 {
		t.Errorf("peak heap %d MB reading %d MB of log that matches no span: want under 100 MB", peak>>20, size>>20)
	}
}
