package analysis

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/latscope/latscope/budget"
	"github.com/latscope/latscope/tracein"
)

// traces recorded by the real runtime (cmd/latscope's test programs).
var traces = []string{"../cmd/latscope/testdata/serial.trace", "../cmd/latscope/testdata/waitgroup.trace"}

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
