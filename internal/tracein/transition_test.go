package tracein

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/exp/trace"
)

// TestTransitions: on every event of the format test traces (Go 1.11 to
// the current format) and of the corpus of real services' traces, the
// recipes write the record the methods write, and a Converter keeps them
// on.
func TestTransitions(t *testing.T) {
	if !stackOK {
		t.Fatal("stackHead does not match x/exp/trace's Stack: the recipes fall back on Event.Stack (slower); update stackHead")
	}
	paths, err := filepath.Glob("testdata/formats/*.trace")
	if err != nil || len(paths) == 0 {
		t.Fatalf("testdata/formats: %v, %d files", err, len(paths))
	}
	corpus, err := filepath.Glob("../../testdata/corpus/*.trace")
	if err != nil || len(corpus) == 0 {
		t.Fatalf("testdata/corpus: %v, %d files", err, len(corpus))
	}
	paths = append(paths, corpus...)
	var fast int
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var (
			kinds          kindCache
			methods, eager transitions
			conv           Converter
		)
		methods.off = true
		for i := range eager.checked {
			eager.checked[i] = checks // every recipe at once, unchecked
		}
		var want, got, via [1]Event
		for n := 0; ; n++ {
			ev, err := tr.ReadEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: event %d: %v", p, n, err)
			}
			evs := []trace.Event{ev}
			kw := convert(evs, want[:], &kinds, &methods)
			kg := convert(evs, got[:], &kinds, &eager)
			kc, _ := conv.Convert(p, evs, via[:])
			if kw != kg || kw == 1 && want[0] != got[0] {
				t.Fatalf("%s: event %d (%v): recipe gives %d %+v, the methods %d %+v", p, n, ev, kg, got[0], kw, want[0])
			}
			if kw != kc || kw == 1 && want[0] != via[0] {
				t.Fatalf("%s: event %d (%v): Converter gives %d %+v, the methods %d %+v", p, n, ev, kc, via[0], kw, want[0])
			}
			if headOK && recipes[(*eventHead)(unsafe.Pointer(&ev)).typ].kind != 0 {
				fast++
			}
		}
		if eager.off || conv.tc.off {
			t.Errorf("%s: a check turned the recipes off", p)
		}
	}
	if fast == 0 {
		t.Error("no event had a recipe")
	}
	t.Logf("%d events by recipe", fast)
}
