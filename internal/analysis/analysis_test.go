package analysis

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/tracein"
)

// traces recorded by the real runtime (cmd/latscope's test programs).
var traces = []string{"../../cmd/latscope/testdata/serial.trace", "../../cmd/latscope/testdata/waitgroup.trace"}

// sequential is the read loop without the decoding stage: one goroutine,
// record by record.
func sequential(t *testing.T, name string, data []byte) *budget.Result {
	t.Helper()
	tr, err := tracein.NewReader(name, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	a := budget.New(budget.DefaultOptions, tr.Stacks())
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			return a.Finalize()
		}
		if err != nil {
			t.Fatal(err)
		}
		a.Event(&ev)
	}
}

// TestPipelineSameAsSequential checks that the two-stage read loop gives
// exactly the result of reading record by record on one goroutine.
func TestPipelineSameAsSequential(t *testing.T) {
	for _, path := range traces {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := sequential(t, path, data)
		got, err := Reader(context.Background(), path, bytes.NewReader(data), budget.DefaultOptions, false)
		if err != nil {
			t.Fatal(err)
		}
		if got.Info.Records == 0 || len(got.Groups) == 0 {
			t.Fatalf("%s: nothing analysed: %+v", path, got.Info)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: pipelined result differs from the sequential one\n got %+v\nwant %+v", path, got.Info, want.Info)
		}
	}
}

// TestPipelineDamage cuts a real trace short: without partial the error
// names the input and offset; with it the records before the damage are
// analysed and a finding says so.
func TestPipelineDamage(t *testing.T) {
	data, err := os.ReadFile(traces[1])
	if err != nil {
		t.Fatal(err)
	}
	cut := data[:len(data)*2/3]
	_, err = Reader(context.Background(), "cut.trace", bytes.NewReader(cut), budget.DefaultOptions, false)
	if err == nil || !strings.Contains(err.Error(), "cut.trace: offset ") {
		t.Fatalf("error = %v, want one naming cut.trace and an offset", err)
	}
	res, err := Reader(context.Background(), "cut.trace", bytes.NewReader(cut), budget.DefaultOptions, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Info.Records == 0 || len(res.Warnings) == 0 || !strings.Contains(res.Warnings[len(res.Warnings)-1].Error(), "damaged") {
		t.Fatalf("partial: %d records, warnings %v", res.Info.Records, res.Warnings)
	}
}

// TestPipelineCancel stops the analysis, and the decoding goroutine, when
// the context is cancelled.
func TestPipelineCancel(t *testing.T) {
	data, err := os.ReadFile(traces[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Reader(ctx, traces[0], bytes.NewReader(data), budget.DefaultOptions, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

// TestDamagedOldFormat: a damaged Go 1.19 trace whose stacks name a string
// the trace lacks made the stack interning of the read loop panic; now it is
// a one-line error naming the file and offset, and with partial the records
// before it are analysed.
func TestDamagedOldFormat(t *testing.T) {
	const path = "../tracein/testdata/damaged/go1.19-string-table.trace"
	for _, partial := range []bool{false, true} {
		res, err := File(context.Background(), path, budget.DefaultOptions, partial)
		if !partial {
			var d interface{ Details() string }
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), path+": offset ") ||
				!strings.Contains(err.Error(), "string table") || !errors.As(err, &d) {
				t.Errorf("error %v: want one line naming the file, the offset and the string table, with Details", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("partial: %v", err)
		}
		last := res.Warnings[len(res.Warnings)-1].Error()
		if !strings.Contains(last, "damaged") || !strings.Contains(last, "string table") || strings.Contains(last, "\n") {
			t.Errorf("partial: last warning %q", last)
		}
	}
}

// TestLongParserError: the parser's multi-line "failed to advance" error is
// one line, in the error and in the partial analysis's warning.
func TestLongParserError(t *testing.T) {
	const path = "../tracein/testdata/damaged/go1.26-frontier.trace"
	_, err := File(context.Background(), path, budget.DefaultOptions, false)
	var d interface{ Details() string }
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "failed to advance") ||
		!errors.As(err, &d) || !strings.Contains(d.Details(), "frontier") {
		t.Fatalf("error %v: want one line, with the parser's dump in Details", err)
	}
	res, err := File(context.Background(), path, budget.DefaultOptions, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w.Error(), "\n") {
			t.Errorf("warning of several lines: %q", w.Error())
		}
	}
}

// TestDirectory: a directory says so rather than "empty file".
func TestDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := File(context.Background(), dir, budget.DefaultOptions, false)
	if err == nil || err.Error() != dir+": is a directory, not a trace file" {
		t.Fatalf("error %v, want one saying it is a directory", err)
	}
}

// FuzzReader runs the read loop (decoding stage, stack interning, analysis)
// over arbitrary bytes, with and without partial: errors must be one line
// naming the input, and nothing may panic. Seeds: one small trace per
// format.
func FuzzReader(f *testing.F) {
	paths, err := filepath.Glob("../tracein/testdata/formats/*.trace")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed traces: %v", err)
	}
	damaged, _ := filepath.Glob("../tracein/testdata/damaged/*.trace") // inputs that panicked or printed a dump
	for i, p := range append(paths, damaged...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, i >= len(paths))
	}
	f.Fuzz(func(t *testing.T, data []byte, partial bool) {
		res, err := Reader(context.Background(), "fuzz", bytes.NewReader(data), budget.DefaultOptions, partial)
		if err != nil {
			var te *tracein.Error
			if msg := err.Error(); !errors.As(err, &te) || !strings.HasPrefix(msg, "fuzz: ") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q (%T): want a one-line *tracein.Error naming the input", msg, err)
			}
			return
		}
		for _, w := range res.Warnings {
			if strings.Contains(w.Error(), "\n") {
				t.Fatalf("warning of several lines: %q", w.Error())
			}
		}
	})
}

// TestDamagedBeforeAnyRequest: a trace cut in its first generation, before
// any request could complete, is refused as damaged at its offset, not as a
// service that lacks instrumentation.
func TestDamagedBeforeAnyRequest(t *testing.T) {
	data, err := os.ReadFile(traces[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{200, 2000, 20000} {
		res, err := Reader(context.Background(), "cut.trace", bytes.NewReader(data[:n]), budget.DefaultOptions, true)
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		var refusal *budget.Finding
		for _, w := range res.Warnings {
			if f, ok := w.(*budget.Finding); ok && f.Refuse {
				refusal = f
			}
		}
		if refusal == nil {
			t.Fatalf("cut at %d: no refusal among %v", n, res.Warnings)
		}
		if !strings.Contains(refusal.Text, "damaged at offset ") || strings.Contains(refusal.Text, "NewTask") {
			t.Errorf("cut at %d: refusal %q: want the damage and its offset, not advice to add tasks", n, refusal.Text)
		}
	}
}

// counter counts the records an analyser made beforehand sees.
type counter struct{ n int }

func (c *counter) Event(*tracein.Event) { c.n++ }

// TestRunFileUse: RunFile feeds every record of a file to an analyser made
// beforehand (Use), as dbwait's is, and names a missing file.
func TestRunFileUse(t *testing.T) {
	t.Parallel()
	var c counter
	lost, err := RunFile(context.Background(), traces[0], Options{}, Use(&c))
	if err != nil || lost != nil {
		t.Fatalf("RunFile: lost %v, err %v", lost, err)
	}
	res, err := File(context.Background(), traces[0], budget.DefaultOptions, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.n == 0 || int64(c.n) != res.Info.Records {
		t.Errorf("the analyser saw %d records, the budget %d", c.n, res.Info.Records)
	}
	if _, err := RunFile(context.Background(), "testdata/none.trace", Options{}, Use(&c)); err == nil || !strings.Contains(err.Error(), "none.trace") {
		t.Errorf("RunFile of a missing file: %v", err)
	}
}
