package jfr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Decoder reads the events of `jfr print --json` output one at a time. It
// walks the enclosing {"recording": {"events": [...]}} token by token and
// decodes one event at a time, so memory is bounded by the largest event,
// not the output (which is 56–178 times the recording's size).
type Decoder struct {
	dec     *json.Decoder
	started bool
	n       int // events decoded
	err     error
}

// NewDecoder returns a decoder reading r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{dec: json.NewDecoder(r)}
}

// Next decodes the next event into ev. It returns io.EOF after the last
// event, and the same error on every call after a failure.
func (d *Decoder) Next(ev *Event) error {
	if d.err != nil {
		return d.err
	}
	d.err = d.next(ev)
	return d.err
}

func (d *Decoder) next(ev *Event) error {
	if !d.started {
		d.started = true
		if err := d.enter(); err != nil {
			return fmt.Errorf("jfr print output: %w", err)
		}
	}
	if !d.dec.More() {
		return d.finish()
	}
	var raw rawEvent
	if err := d.dec.Decode(&raw); err != nil {
		return fmt.Errorf("jfr print output, event %d (offset %d): %w", d.n, d.dec.InputOffset(), noEOF(err))
	}
	*ev = Event{}
	if err := raw.convert(ev); err != nil {
		return fmt.Errorf("jfr print output, event %d (%s, offset %d): %w", d.n, raw.Type, d.dec.InputOffset(), err)
	}
	d.n++
	return nil
}

// enter reads up to the first element of recording.events.
func (d *Decoder) enter() error {
	for _, key := range []string{"recording", "events"} {
		if err := d.delim('{'); err != nil {
			return err
		}
		if err := d.seek(key); err != nil {
			return err
		}
	}
	return d.delim('[')
}

// seek skips members of the current object up to the one named key.
func (d *Decoder) seek(key string) error {
	for d.dec.More() {
		t, err := d.dec.Token()
		if err != nil {
			return noEOF(err)
		}
		if t == key {
			return nil
		}
		var skip json.RawMessage
		if err := d.dec.Decode(&skip); err != nil {
			return noEOF(err)
		}
	}
	return fmt.Errorf("no %q member", key)
}

// noEOF turns the end of the input inside the document into
// io.ErrUnexpectedEOF: only Next's own io.EOF means the events are done.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (d *Decoder) delim(want json.Delim) error {
	t, err := d.dec.Token()
	if err != nil {
		return fmt.Errorf("want %q: %w", want, noEOF(err))
	}
	if t != want {
		return fmt.Errorf("want %q, got %v", want, t)
	}
	return nil
}

// finish reads the closing brackets after the last event.
func (d *Decoder) finish() error {
	if err := d.delim(']'); err != nil {
		return fmt.Errorf("jfr print output after %d events: %w", d.n, err)
	}
	return io.EOF
}

// rawEvent is the JSON form of an event; fields whose type differs between
// event types are kept raw and parsed only for the type that has them.
type rawEvent struct {
	Type   string    `json:"type"`
	Values rawValues `json:"values"`
}

type rawValues struct {
	StartTime     string          `json:"startTime"`
	Duration      json.RawMessage `json:"duration"`
	EventThread   *rawThread      `json:"eventThread"`
	SampledThread *rawThread      `json:"sampledThread"`
	StackTrace    *rawStack       `json:"stackTrace"`
	ID            json.RawMessage `json:"id"`
	Name          json.RawMessage `json:"name"`
	Value         json.RawMessage `json:"value"`
	JVMStartTime  json.RawMessage `json:"jvmStartTime"`
	HWThreads     json.RawMessage `json:"hwThreads"`
	JVMUser       json.RawMessage `json:"jvmUser"`
	JVMSystem     json.RawMessage `json:"jvmSystem"`
	MachineTotal  json.RawMessage `json:"machineTotal"`
	MonitorClass  json.RawMessage `json:"monitorClass"`
	Route         json.RawMessage `json:"route"`
	Traceparent   json.RawMessage `json:"traceparent"`
	RequestID     json.RawMessage `json:"requestId"`
	TaskID        json.RawMessage `json:"taskId"`
	CPUTime       json.RawMessage `json:"cpuTime"`
	QueueTime     json.RawMessage `json:"queueTime"`
	ServerWorkers json.RawMessage `json:"serverWorkers"`
	Site          json.RawMessage `json:"site"`
	TotalTime     json.RawMessage `json:"totalTimeSpent"`
	CompileCount  json.RawMessage `json:"compileCount"`
}

type rawThread struct {
	OSName       string `json:"osName"`
	OSThreadID   int64  `json:"osThreadId"`
	JavaName     string `json:"javaName"`
	JavaThreadID int64  `json:"javaThreadId"`
}

type rawStack struct {
	Truncated bool       `json:"truncated"`
	Frames    []rawFrame `json:"frames"`
}

type rawFrame struct {
	Method struct {
		Type struct {
			Name string `json:"name"`
		} `json:"type"`
		Name string `json:"name"`
	} `json:"method"`
	LineNumber int `json:"lineNumber"`
}

// convert fills ev from r.
func (r *rawEvent) convert(ev *Event) error {
	v := &r.Values
	if r.Type == "" {
		return errors.New("event without a type")
	}
	ev.Type = r.Type
	var err error
	if v.StartTime != "" {
		if ev.Start, err = parseTime(v.StartTime); err != nil {
			return fmt.Errorf("startTime: %w", err)
		}
	}
	if ev.Duration, err = durationValue(v.Duration); err != nil {
		return err
	}
	if t := v.EventThread; t != nil {
		ev.Thread = t.thread()
	}
	if t := v.SampledThread; t != nil {
		ev.Thread = t.thread()
	}
	if s := v.StackTrace; s != nil {
		ev.Truncated = s.Truncated
		ev.Stack = make([]Frame, len(s.Frames))
		for i, f := range s.Frames {
			ev.Stack[i] = Frame{Method: methodName(f.Method.Type.Name, f.Method.Name), Line: f.LineNumber}
		}
	}
	return r.typed(ev)
}

// typed fills the values of the event types the analysis reads.
func (r *rawEvent) typed(ev *Event) error {
	v := &r.Values
	var err error
	switch r.Type {
	case "jdk.ActiveSetting":
		if ev.Setting.TypeID, err = intValue("id", v.ID); err != nil {
			return err
		}
		ev.Setting.Name, _ = stringValue(v.Name)
		ev.Setting.Value, _ = stringValue(v.Value)
	case "jdk.JVMInformation":
		s, _ := stringValue(v.JVMStartTime)
		if s != "" {
			if ev.JVMStart, err = parseTime(s); err != nil {
				return fmt.Errorf("jvmStartTime: %w", err)
			}
		}
	case "jdk.CPUInformation":
		n, err := intValue("hwThreads", v.HWThreads)
		if err != nil {
			return err
		}
		ev.HWThreads = int(n)
	case "jdk.CPULoad":
		for _, f := range []struct {
			name string
			raw  json.RawMessage
			dst  *float64
		}{{"jvmUser", v.JVMUser, &ev.Load.JVMUser}, {"jvmSystem", v.JVMSystem, &ev.Load.JVMSystem}, {"machineTotal", v.MachineTotal, &ev.Load.MachineTotal}} {
			if *f.dst, err = floatValue(f.name, f.raw); err != nil {
				return err
			}
		}
	case "jdk.CompilerStatistics":
		if ev.Compiler.Count, err = intValue("compileCount", v.CompileCount); err != nil {
			return err
		}
		if d, err := durationValue(v.TotalTime); err == nil {
			ev.Compiler.Time = d
		}
	case "jdk.JavaMonitorEnter", "jdk.JavaMonitorWait":
		var c struct {
			Name string `json:"name"`
		}
		if len(v.MonitorClass) > 0 && json.Unmarshal(v.MonitorClass, &c) == nil {
			ev.MonitorClass = strings.ReplaceAll(c.Name, "/", ".")
		}
	case "latscope.Request", "latscope.TaskSubmit", "latscope.TaskRun", "latscope.TaskWait", "latscope.Hold":
		ev.Req.Route, _ = stringValue(v.Route)
		ev.Req.Traceparent, _ = stringValue(v.Traceparent)
		if ev.Req.RequestID, err = intValue("requestId", v.RequestID); err != nil {
			return err
		}
		if r.Type == "latscope.Hold" {
			ev.Req.Name, _ = stringValue(v.Name)
			ev.Req.Site, _ = stringValue(v.Site)
		} else if r.Type != "latscope.Request" {
			if ev.Req.TaskID, err = intValue("taskId", v.TaskID); err != nil {
				return err
			}
		}
		if r.Type == "latscope.Request" && len(v.ServerWorkers) > 0 {
			var n int64
			if err := json.Unmarshal(v.ServerWorkers, &n); err != nil {
				return fmt.Errorf("latscope.Request serverWorkers %s: %w", v.ServerWorkers, err)
			}
			if n > 0 && n <= maxWorkers {
				ev.Req.Workers = int(n)
			}
		}
		if r.Type == "latscope.Request" && len(v.QueueTime) > 0 {
			if ev.Req.Queue, ev.Req.HasQueue, err = cpuTimeValue(v.QueueTime); err != nil {
				return err
			}
		}
		if r.Type != "latscope.TaskSubmit" && r.Type != "latscope.TaskWait" && len(v.CPUTime) > 0 {
			if ev.Req.CPU, ev.Req.HasCPU, err = cpuTimeValue(v.CPUTime); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *rawThread) thread() Thread {
	name := t.JavaName
	if name == "" {
		name = t.OSName
	}
	return Thread{Name: name, JavaID: t.JavaThreadID, OSID: t.OSThreadID}
}

// methodName joins a JVM class name ("java/net/Socket$SocketInputStream")
// and a method into "java.net.Socket$SocketInputStream.read".
func methodName(class, method string) string {
	return strings.ReplaceAll(class, "/", ".") + "." + method
}

func durationValue(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	s, err := stringValue(raw)
	if err != nil {
		return 0, fmt.Errorf("duration: %w", err)
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return d, nil
}

func stringValue(raw json.RawMessage) (string, error) {
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func intValue(name string, raw json.RawMessage) (int64, error) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: want an integer, got %.40q", name, raw)
	}
	return n, nil
}

// parseTime parses a time as jfr print writes it: RFC 3339, whose seconds
// the JDK leaves out when they and the nanoseconds are zero
// ("2026-12-02T16:54Z").
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t2, err2 := time.Parse("2006-01-02T15:04Z07:00", s); err2 == nil {
			return t2, nil
		}
	}
	return t, err
}

// floatValue parses a number; null (how jfr print writes a NaN) is 0, as
// the binary reader reads it.
func floatValue(name string, raw json.RawMessage) (float64, error) {
	if string(raw) == "null" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, fmt.Errorf("%s: want a number, got %.40q", name, raw)
	}
	return f, nil
}

// cpuTimeValue parses the library's cpuTime field: a duration as jfr print
// writes a timespan ("PT0.0047S"), or a number of nanoseconds. A negative
// value (the JVM could not measure it) or one jfr print writes as no
// duration ("N/A") is absent, not an error.
func cpuTimeValue(raw json.RawMessage) (time.Duration, bool, error) {
	if string(raw) == "null" {
		return 0, false, nil
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, fmt.Errorf("cpuTime: %w", err)
		}
		d, err := ParseDuration(s)
		if err != nil || d < 0 {
			return 0, false, nil
		}
		return d, true, nil
	}
	n, err := intValue("cpuTime", raw)
	if err != nil || n < 0 {
		return 0, false, err
	}
	return time.Duration(n), true, nil
}
