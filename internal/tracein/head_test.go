package tracein

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"testing"

	"golang.org/x/exp/trace"
)

// TestHead checks that the in-place reading of an event's head is in use
// with the x/exp/trace this is built with, and that it gives what the
// methods give on every event of the format test traces.
func TestHead(t *testing.T) {
	if !headOK {
		t.Fatal("eventHead does not match x/exp/trace's Event: conversion falls back on the methods (slower); update eventHead")
	}
	paths := traceFiles(t, "testdata/formats/*.trace")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var kinds kindCache
		for n := 0; ; n++ {
			ev, err := tr.ReadEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: event %d: %v", p, n, err)
			}
			tm, g, m, pr, k := head(&ev, &kinds)
			if tm != ev.Time() || g != ev.Goroutine() || m != ev.Thread() || pr != ev.Proc() || k != ev.Kind() {
				t.Fatalf("%s: event %d (%v): head gives %v %v %v %v %v", p, n, ev, tm, g, m, pr, k)
			}
		}
	}
	if headMatches(reflect.TypeFor[struct{ a, b int64 }]()) {
		t.Error("headMatches accepts a struct without the fields")
	}
}
