package jfr

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func decodeAllEvents(t testing.TB, r io.Reader) ([]Event, error) {
	t.Helper()
	d := NewDecoder(r)
	var out []Event
	for {
		var ev Event
		err := d.Next(&ev)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// TestDecodePrint decodes testdata/print.json: events of a Probe recording
// as `jfr print --json --stack-depth 64` wrote them (two with every nested
// class loader and package, the rest trimmed to the class names).
func TestDecodePrint(t *testing.T) {
	f, err := os.Open("testdata/print.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := decodeAllEvents(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 18 {
		t.Fatalf("%d events, want 18", len(evs))
	}
	tests := []struct {
		i      int
		typ    string
		dur    time.Duration
		thread string
		leaf   string
		depth  int
		check  func(Event) bool
	}{
		{0, "jdk.ActiveSetting", 0, "Attach Listener", "", 0, func(e Event) bool { return e.Setting == Setting{TypeID: 5, Name: "threshold", Value: "1 ms"} }},
		{3, "jdk.JVMInformation", 0, "", "", 0, func(e Event) bool { return e.JVMStart.Equal(time.Date(2026, 12, 2, 16, 54, 54, 28e6, time.UTC)) }},
		{4, "jdk.CPUInformation", 0, "", "", 0, func(e Event) bool { return e.HWThreads == 2 }},
		{6, "jdk.CPULoad", 0, "", "", 0, func(e Event) bool { return e.Load.MachineTotal > 0 && e.Load.JVMUser > 0 }},
		{7, "jdk.SocketRead", 54999792 * time.Nanosecond, "worker-2", "java.net.Socket$SocketInputStream.read", 14, func(e Event) bool {
			return e.Stack[9].Method == "Probe.handle" && e.Stack[8] == Frame{Method: "Probe.callUpstream", Line: 135} && e.Thread.JavaID > 0 && e.Thread.OSID > 0
		}},
		{8, "jdk.ExecutionSample", 0, "worker-2", "java.util.concurrent.ConcurrentHashMap.clear", 20, nil},
		{17, "jdk.JavaMonitorEnter", 5059906 * time.Nanosecond, "worker-1", "Probe.lockedSection", 6, func(e Event) bool { return e.MonitorClass == "java.lang.Object" }},
	}
	for _, tt := range tests {
		e := evs[tt.i]
		leaf := ""
		if len(e.Stack) > 0 {
			leaf = e.Stack[0].Method
		}
		if e.Type != tt.typ || e.Duration != tt.dur || e.Thread.Name != tt.thread || leaf != tt.leaf || len(e.Stack) != tt.depth || e.Start.IsZero() {
			t.Errorf("event %d = %s %v on %q, leaf %q of %d frames; want %s %v on %q, leaf %q of %d", tt.i, e.Type, e.Duration, e.Thread.Name, leaf, len(e.Stack), tt.typ, tt.dur, tt.thread, tt.leaf, tt.depth)
		}
		if tt.check != nil && !tt.check(e) {
			t.Errorf("event %d: %+v", tt.i, e)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	ev := `{"type": "jdk.ThreadPark", "values": {"startTime": "2026-12-02T14:09:42.291671370Z", "duration": %s}}`
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "unexpected EOF"},
		{"not json", "jfr print: could not open file", "invalid character"},
		{"no recording", `{"other": 1}`, `no "recording" member`},
		{"events not an array", `{"recording": {"events": 3}}`, `want "["`},
		{"cut in an event", `{"recording": {"events": [{"type": "jdk.ThreadPark", "values": {"dura`, "event 0"},
		{"cut after an event", `{"recording": {"events": [` + strings.Replace(ev, "%s", `"PT1S"`, 1), "after 1 events"},
		{"bad duration", `{"recording": {"events": [` + strings.Replace(ev, "%s", `"1 s"`, 1) + `]}}`, `duration "1 s"`},
		{"negative duration", `{"recording": {"events": [` + strings.Replace(ev, "%s", `"PT-1S"`, 1) + `]}}`, "negative duration"},
		{"number duration", `{"recording": {"events": [` + strings.Replace(ev, "%s", `12`, 1) + `]}}`, "duration"},
		{"no type", `{"recording": {"events": [{"values": {}}]}}`, "without a type"},
		{"bad start", `{"recording": {"events": [{"type": "x", "values": {"startTime": "yesterday"}}]}}`, "startTime"},
		{"bad setting id", `{"recording": {"events": [{"type": "jdk.ActiveSetting", "values": {"id": "x"}}]}}`, "id: want an integer"},
		{"frames not an array", `{"recording": {"events": [{"type": "x", "values": {"stackTrace": {"frames": 1}}}]}}`, "event 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeAllEvents(t, strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestDecodeSticky(t *testing.T) {
	d := NewDecoder(strings.NewReader(`{"recording": {"events": [{"type": "a", "values": {}}]}}`))
	var ev Event
	if err := d.Next(&ev); err != nil || ev.Type != "a" {
		t.Fatalf("first Next = %v, %q", err, ev.Type)
	}
	for range 2 {
		if err := d.Next(&ev); err != io.EOF {
			t.Fatalf("Next after the last event = %v, want io.EOF", err)
		}
	}
}

// TestDecodeSeed decodes testdata/seed.json, FuzzDecoder's main seed: the
// first event of each type in testdata/print.json, stacks cut to two frames
// (print.json itself, at 88 kB, kept the fuzzing engine busy minimising it).
func TestDecodeSeed(t *testing.T) {
	b, err := os.ReadFile("testdata/seed.json")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := decodeAllEvents(t, bytes.NewReader(b))
	if err != nil || len(evs) != 9 {
		t.Fatalf("%d events, %v; want 9, one of each type in print.json", len(evs), err)
	}
	if len(b) > 8<<10 {
		t.Errorf("seed of %d bytes: keep it small, the fuzzing engine minimises what it finds", len(b))
	}
}

func FuzzDecoder(f *testing.F) {
	b, err := os.ReadFile("testdata/seed.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"recording": {"events": []}}`))
	f.Add([]byte(`{"recording": {"x": [1, {"y": null}], "events": [{"type": "jdk.ActiveSetting", "values": {"id": 5, "name": "threshold", "value": "1 ms"}}]}}`))
	f.Add([]byte(`{"recording": {"events": [{"type": "jdk.CPULoad", "values": {"jvmUser": 1e-3, "jvmSystem": 0, "machineTotal": 0.5}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := decodeAllEvents(t, bytes.NewReader(data))
		if err != nil && errors.Is(err, io.EOF) {
			t.Fatalf("a failure wraps io.EOF: %v", err)
		}
		for _, e := range evs {
			if e.Type == "" || e.Duration < 0 {
				t.Fatalf("decoded an event without a type or with a negative duration: %+v", e)
			}
		}
	})
}

// BenchmarkDecoder decodes testdata/print.json's events over and over in one
// stream; SetBytes makes the result JSON bytes per second.
func BenchmarkDecoder(b *testing.B) {
	raw, err := os.ReadFile("testdata/print.json")
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	body := s[strings.Index(s, "[")+1 : strings.LastIndex(s, "]")]
	var buf bytes.Buffer
	buf.WriteString(`{"recording": {"events": [`)
	for i := range 100 {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString(body)
	}
	buf.WriteString("]}}")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeAllEvents(b, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeJDKShortForms: jfr print leaves the seconds out of a time whose
// seconds and nanoseconds are zero, and writes a NaN CPU load as null.
func TestDecodeJDKShortForms(t *testing.T) {
	in := `{"recording": {"events": [
	{"type": "jdk.JVMInformation", "values": {"startTime": "2026-12-02T16:54:01.5Z", "jvmStartTime": "2026-12-02T16:54Z"}},
	{"type": "jdk.CPULoad", "values": {"startTime": "2026-12-02T16:55Z", "jvmUser": null, "jvmSystem": 0.25, "machineTotal": 0.5}}
	]}}`
	d := NewDecoder(strings.NewReader(in))
	var ev Event
	if err := d.Next(&ev); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 2, 16, 54, 0, 0, time.UTC); !ev.JVMStart.Equal(want) {
		t.Errorf("jvmStartTime %v, want %v", ev.JVMStart, want)
	}
	if err := d.Next(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Load != (CPULoad{JVMUser: 0, JVMSystem: 0.25, MachineTotal: 0.5}) || ev.Start.Minute() != 55 {
		t.Errorf("CPULoad %+v at %v", ev.Load, ev.Start)
	}
}
