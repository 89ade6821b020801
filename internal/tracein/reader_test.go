package tracein_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/tracein"
	xtrace "golang.org/x/exp/trace"
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

// formats returns the small traces of every format the reader accepts, by
// file name: testdata/formats/go1.11, 1.19 and 1.21 are the Go distribution's
// own old-format test traces (its src/internal/trace/internal/tracev1/testdata,
// user_task_region_1_*_good); go1.22, 1.23 and 1.25 are its text-format tests
// go122-annotations, go123-sync and go125-sync (src/internal/trace/testdata/
// tests) converted to the binary format; go1.26 is smallTrace, recorded.
func formats(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/formats/*.trace")
	if err != nil || len(paths) < 7 {
		t.Fatalf("testdata/formats: %v, %d files", err, len(paths))
	}
	m := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m[filepath.Base(p)] = b
	}
	return m
}

// TestFormats reads a trace of every format x/exp/trace accepts.
func TestFormats(t *testing.T) {
	for name, data := range formats(t) {
		evs, err := readAll(name, data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var sync bool
		for _, ev := range evs {
			sync = sync || ev.Kind == tracein.KindSync
		}
		if len(evs) < 2 || !sync {
			t.Errorf("%s: %d records, sync %v", name, len(evs), sync)
		}
	}
}

// checkOneLine fails unless err is a one-line *tracein.Error naming the
// input and an offset, with Details (found as the CLI's --debug finds
// them) of several lines.
func checkOneLine(t *testing.T, err error, name string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, name+": offset ") {
		t.Errorf("error %q: want one line starting %q", msg, name+": offset ")
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q: want %q in it", msg, w)
		}
	}
	var te *tracein.Error
	var d interface{ Details() string }
	if !errors.As(err, &te) || !errors.As(err, &d) || strings.Count(d.Details(), "\n") < 2 {
		t.Errorf("error %q (%T): want a *tracein.Error with Details of several lines", msg, err)
	}
}

// readRaw reads data as the analysis pipeline does: ReadRaw, Convert,
// Resolve.
func readRaw(name string, data []byte) (int, error) {
	r, err := tracein.NewReader(name, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	raw := make([]xtrace.Event, 64)
	recs := make([]tracein.Event, 64)
	total := 0
	var conv tracein.Converter
	for {
		n, rerr := r.ReadRaw(raw)
		m, err := conv.Convert(name, raw[:n], recs)
		if err != nil {
			return total, err
		}
		k, err := r.Stacks().Resolve(recs[:m])
		total += k
		if err != nil {
			return total, err
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

// TestDamagedOldFormat: old-format traces (Go 1.11–1.21) are converted
// lazily; a stack or string table entry that a damaged trace lacks made the
// parser panic while its stacks were interned ("expected id 96 in string
// table"), outside the reader's panic guard. Now it is an error, on every
// read path.
func TestDamagedOldFormat(t *testing.T) {
	for _, p := range []string{"testdata/damaged/go1.19-string-table.trace", "testdata/damaged/go1.11-stack-table.trace"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			_, err := readAll(name, data)
			checkOneLine(t, err, name, "bad trace data", "table")
			var te *tracein.Error
			if errors.As(err, &te) && !strings.Contains(te.Details(), "panic: expected id") {
				t.Errorf("details %q: want the parser's panic", te.Details())
			}
			_, err = readRaw(name, data)
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "table") {
				t.Errorf("ReadRaw/Convert/Resolve: error %v", err)
			}
		})
	}
}

// TestLongParserError: x/exp/trace's "failed to advance" error carries a
// state dump of some 25 lines; the error is one line and the dump is in
// Details.
func TestLongParserError(t *testing.T) {
	data, err := os.ReadFile("testdata/damaged/go1.26-frontier.trace")
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll("f.trace", data)
	checkOneLine(t, err, "f.trace", "failed to advance")
	var d interface{ Details() string }
	if errors.As(err, &d) && (strings.Count(d.Details(), "\n") < 10 || !strings.Contains(d.Details(), "frontier")) {
		t.Errorf("details: want the parser's dump, got %q", d.Details())
	}
}

// TestShortErrorNoDetails: an error that is all in its one line has no
// Details (the CLI offers --debug only when there are some).
func TestShortErrorNoDetails(t *testing.T) {
	_, err := readAll("x.trace", []byte("module example.com/x\n"))
	var te *tracein.Error
	if !errors.As(err, &te) || te.Details() != "" {
		t.Fatalf("error %v: want a *tracein.Error without details", err)
	}
}

// TestDirectory: a directory given as a trace says so (it used to be an
// "empty file").
func TestDirectory(t *testing.T) {
	f, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = tracein.NewReader("d", f)
	if err == nil || err.Error() != "d: is a directory, not a trace file" {
		t.Fatalf("error %v, want one saying d is a directory", err)
	}
}

// FuzzReader feeds arbitrary bytes through the reader and the analyser:
// errors are fine if they are one line naming the input, panics and hangs
// are not. The seeds are small traces of every format the reader accepts.
func FuzzReader(f *testing.F) {
	for _, data := range formats(f) {
		f.Add(data)
	}
	good := formats(f)["go1.26.trace"]
	f.Add(good[:len(good)/3])
	damaged, _ := filepath.Glob("testdata/damaged/*.trace") // the inputs that panicked or printed a dump
	for _, p := range damaged {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("go 1.26 trace\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := tracein.NewReader("fuzz", bytes.NewReader(data))
		if err != nil {
			fuzzCheck(t, err)
			return
		}
		a := budget.New(budget.DefaultOptions, r.Stacks())
		for i := 0; i < 1<<20; i++ {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fuzzCheck(t, err)
				break
			}
			a.Event(&ev)
		}
		a.Finalize()
	})
}

func fuzzCheck(t *testing.T, err error) {
	var te *tracein.Error
	if msg := err.Error(); !errors.As(err, &te) || !strings.HasPrefix(msg, "fuzz: ") || strings.Contains(msg, "\n") {
		t.Fatalf("error %q (%T): want a one-line *tracein.Error naming the input", msg, err)
	}
}

// TestTruncatedOldFormat: a Go 1.11–1.21 trace that fails before its first
// event says that the format is parsed whole (x/exp/trace converts it in
// memory first), so that --partial cannot help; a cut Go 1.22+ trace does
// not. (A Go 1.19 trace cut in half fails later, at a stack, and --partial
// analyses what came before.)
func TestTruncatedOldFormat(t *testing.T) {
	for _, v := range []string{"1.11", "1.21", "1.26"} {
		data, err := os.ReadFile("testdata/formats/go" + v + ".trace")
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAll("cut.trace", data[:len(data)/2])
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Fatalf("go%s cut in half: error %v", v, err)
		}
		if old := v != "1.26"; strings.Contains(err.Error(), "parsed whole") != old {
			t.Errorf("go%s cut in half: %v", v, err)
		}
	}
}
