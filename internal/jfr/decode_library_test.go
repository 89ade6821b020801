package jfr

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/jfr/jfrtest"
)

// libraryEvents are the Java library's event types (java/).
var libraryEvents = []string{"latscope.Request", "latscope.TaskSubmit", "latscope.TaskRun", "latscope.TaskWait", "latscope.Hold"}

// edgePrint is what the JDK's jfr (OpenJDK 17.0.15) printed for the kept recording
// testdata/rec/edge.jfr with
//
//	jfr print --json --stack-depth 1 --events latscope.Request,latscope.TaskSubmit,latscope.TaskRun,latscope.TaskWait,latscope.Hold
//
// all 13 events, each thread trimmed to its names and ids and each frame to its class name,
// method name and line (the class loader, package and module trees the decoder does not
// read are cut, as in testdata/print.json).
const edgePrint = `{"recording": {"events": [
{"type": "latscope.TaskSubmit", "values": {"startTime": "2026-12-04T16:32:16.645297511Z", "duration": "PT0S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "submitted"}, "lineNumber": 107}]}, "requestId": 1, "taskId": 1}},
{"type": "latscope.TaskRun", "values": {"startTime": "2026-12-04T16:32:16.655247847Z", "duration": "PT0.000760311S", "eventThread": {"osName": "pool-1-thread-1", "osThreadId": 19308, "javaName": "pool-1-thread-1", "javaThreadId": 15}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "ran"}, "lineNumber": 123}]}, "requestId": 1, "taskId": 1, "cpuTime": "PT0.000647224S"}},
{"type": "latscope.TaskSubmit", "values": {"startTime": "2026-12-04T16:32:16.666753848Z", "duration": "PT0S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "submitted"}, "lineNumber": 107}]}, "requestId": 1, "taskId": 2}},
{"type": "latscope.TaskSubmit", "values": {"startTime": "2026-12-04T16:32:16.670352291Z", "duration": "PT0S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "submitted"}, "lineNumber": 107}]}, "requestId": 1, "taskId": 3}},
{"type": "latscope.TaskRun", "values": {"startTime": "2026-12-04T16:32:16.670471896Z", "duration": "PT0.00007361S", "eventThread": {"osName": "pool-1-thread-2", "osThreadId": 19309, "javaName": "pool-1-thread-2", "javaThreadId": 16}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "ran"}, "lineNumber": 123}]}, "requestId": 1, "taskId": 2, "cpuTime": "PT0.000061813S"}},
{"type": "latscope.TaskRun", "values": {"startTime": "2026-12-04T16:32:16.670593288Z", "duration": "PT0.000012699S", "eventThread": {"osName": "pool-1-thread-2", "osThreadId": 19309, "javaName": "pool-1-thread-2", "javaThreadId": 16}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "ran"}, "lineNumber": 123}]}, "requestId": 1, "taskId": 3, "cpuTime": "PT0.000010656S"}},
{"type": "latscope.TaskWait", "values": {"startTime": "2026-12-04T16:32:16.673141229Z", "duration": "PT0.000009354S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "waited"}, "lineNumber": 136}]}, "requestId": 1, "taskId": 2}},
{"type": "latscope.TaskWait", "values": {"startTime": "2026-12-04T16:32:16.673207569Z", "duration": "PT0.000000651S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "waited"}, "lineNumber": 136}]}, "requestId": 1, "taskId": 2}},
{"type": "latscope.TaskWait", "values": {"startTime": "2026-12-04T16:32:16.673215140Z", "duration": "PT0.000000491S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "waited"}, "lineNumber": 136}]}, "requestId": 1, "taskId": 3}},
{"type": "latscope.TaskSubmit", "values": {"startTime": "2026-12-04T16:32:16.676860313Z", "duration": "PT0S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "submitted"}, "lineNumber": 107}]}, "requestId": 1, "taskId": 4}},
{"type": "latscope.TaskRun", "values": {"startTime": "2026-12-04T16:32:16.680970740Z", "duration": "PT0.00014605S", "eventThread": {"osName": "pool-1-thread-2", "osThreadId": 19309, "javaName": "pool-1-thread-2", "javaThreadId": 16}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "ran"}, "lineNumber": 123}]}, "requestId": 1, "taskId": 4, "cpuTime": "PT0.000133931S"}},
{"type": "latscope.TaskWait", "values": {"startTime": "2026-12-04T16:32:16.680934481Z", "duration": "PT0.000276755S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Tasks"}, "name": "waited"}, "lineNumber": 136}]}, "requestId": 1, "taskId": 4}},
{"type": "latscope.Request", "values": {"startTime": "2026-12-04T16:32:16.616737853Z", "duration": "PT0.069851889S", "eventThread": {"osName": "main", "osThreadId": 19286, "javaName": "main", "javaThreadId": 1}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Request"}, "name": "end"}, "lineNumber": 53}]}, "route": "/edge", "traceparent": null, "requestId": 1, "cpuTime": "PT0.017330617S", "queueTime": "PT-0.000000001S"}}
]}}`

// svcHoldPrint is the first two of the 1937 latscope.Hold events jfr printed, the same way,
// for the kept recording testdata/rec/svc.jfr.gz (unpacked).
const svcHoldPrint = `{"recording": {"events": [
{"type": "latscope.Hold", "values": {"startTime": "2026-12-05T14:19:16.003071659Z", "duration": "PT0S", "eventThread": {"osName": "http-worker", "osThreadId": 17523, "javaName": "http-worker", "javaThreadId": 38}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Holds$Hold"}, "name": "end"}, "lineNumber": 46}]}, "name": "ConnPool", "site": "ConnPool.borrow", "requestId": 5445, "cpuTime": "PT0.000118747S"}},
{"type": "latscope.Hold", "values": {"startTime": "2026-12-05T14:19:16.005118532Z", "duration": "PT0S", "eventThread": {"osName": "http-worker", "osThreadId": 17522, "javaName": "http-worker", "javaThreadId": 37}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Holds$Hold"}, "name": "end"}, "lineNumber": 46}]}, "name": "cache", "site": "Svc.updateCache", "requestId": 5437, "cpuTime": "PT0.001192607S"}}
]}}`

// svcRequestPrint is the first two of its 971 latscope.Request events, printed the same way:
// a queueTime and the server's workers (io.latscope.ServerQueue) on each.
const svcRequestPrint = `{"recording": {"events": [
{"type": "latscope.Request", "values": {"startTime": "2026-12-05T14:19:16.005280405Z", "duration": "PT0S", "eventThread": {"osName": "http-worker", "osThreadId": 17522, "javaName": "http-worker", "javaThreadId": 37}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Request"}, "name": "end"}, "lineNumber": 54}]}, "route": "/order", "traceparent": null, "requestId": 5437, "cpuTime": "PT0.002046669S", "queueTime": "PT0.002536307S", "serverWorkers": 32}},
{"type": "latscope.Request", "values": {"startTime": "2026-12-05T14:19:16.008198607Z", "duration": "PT0S", "eventThread": {"osName": "http-worker", "osThreadId": 17601, "javaName": "http-worker", "javaThreadId": 62}, "stackTrace": {"truncated": false, "frames": [{"method": {"type": {"name": "io/latscope/Request"}, "name": "end"}, "lineNumber": 54}]}, "route": "/order", "traceparent": null, "requestId": 5440, "cpuTime": "PT0.001829384S", "queueTime": "PT0.001769116S", "serverWorkers": 32}}
]}}`

// TestDecodeLibraryEvents decodes what jfr print wrote for the Java library's events and
// requires the same events the binary reader reads from the recording: the request's route,
// id and measured CPU, the tasks' ids and CPU, a hold's name and site, a null traceparent as
// empty, a negative queueTime (not measured) as absent, and the server's workers.
func TestDecodeLibraryEvents(t *testing.T) {
	t.Parallel()
	svc, err := jfrtest.Kept("svc", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, print, path string
		types             []string
		n                 int
	}{
		{"edge", edgePrint, "testdata/rec/edge.jfr", libraryEvents, 13},
		{"svc", svcHoldPrint, svc, []string{"latscope.Hold"}, 2},
		{"svc-requests", svcRequestPrint, svc, []string{"latscope.Request"}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			printed, err := decodeAllEvents(t, strings.NewReader(tt.print))
			if err != nil || len(printed) != tt.n {
				t.Fatalf("%d events, %v; want %d", len(printed), err, tt.n)
			}
			var bin []Event
			err = ReadBinary(context.Background(), tt.path, PrintOptions{StackDepth: 1, Events: tt.types}, func(ev *Event) error {
				if len(bin) < tt.n {
					bin = append(bin, *ev)
				}
				return nil
			})
			if err != nil || len(bin) < tt.n {
				t.Fatalf("binary reader: %d events, %v; want %d at least", len(bin), err, tt.n)
			}
			for i := range printed {
				p, b := printed[i], bin[i]
				if !p.Start.Equal(b.Start) {
					t.Errorf("event %d: printed start %v, binary %v", i, p.Start, b.Start)
				}
				p.Start, b.Start = time.Time{}, time.Time{}
				if !reflect.DeepEqual(p, b) {
					t.Errorf("event %d:\n printed %+v\n binary  %+v", i, p, b)
				}
			}
		})
	}

	evs, _ := decodeAllEvents(t, strings.NewReader(edgePrint))
	req := evs[len(evs)-1]
	want := ReqInfo{Route: "/edge", RequestID: 1, CPU: 17330617 * time.Nanosecond, HasCPU: true}
	if req.Type != "latscope.Request" || req.Req != want || req.Duration != 69851889*time.Nanosecond {
		t.Errorf("the request: %s %v %+v; want latscope.Request 69.851889ms %+v", req.Type, req.Duration, req.Req, want)
	}
	if run := evs[1]; run.Type != "latscope.TaskRun" || run.Req != (ReqInfo{RequestID: 1, TaskID: 1, CPU: 647224 * time.Nanosecond, HasCPU: true}) {
		t.Errorf("the first task run: %s %+v", run.Type, run.Req)
	}
	holds, _ := decodeAllEvents(t, strings.NewReader(svcHoldPrint))
	if h := holds[1].Req; h.Name != "cache" || h.Site != "Svc.updateCache" || h.RequestID != 5437 || h.CPU != 1192607*time.Nanosecond {
		t.Errorf("the second hold: %+v", h)
	}
	reqs, _ := decodeAllEvents(t, strings.NewReader(svcRequestPrint))
	if r := reqs[0].Req; r.Queue != 2536307*time.Nanosecond || !r.HasQueue || r.Workers != 32 {
		t.Errorf("the first request: %+v; want its queueTime and 32 workers", r)
	}
}

// TestDecodeLibraryForms: the library's cpuTime as a library that wrote plain nanoseconds
// (a long, which jfr print writes as a number) has it, null or a duration jfr print cannot
// write ("N/A"), absent; ids that are not integers are errors naming the field.
func TestDecodeLibraryForms(t *testing.T) {
	t.Parallel()
	ev := func(typ, values string) string {
		return `{"recording": {"events": [{"type": "` + typ + `", "values": {"startTime": "2026-12-04T16:32:16.616737853Z", ` + values + `}}]}}`
	}
	for _, tt := range []struct {
		in   string
		want ReqInfo
	}{
		{ev("latscope.Request", `"requestId": 7, "cpuTime": 4700000`), ReqInfo{RequestID: 7, CPU: 4700 * time.Microsecond, HasCPU: true}},
		{ev("latscope.Request", `"requestId": 7, "cpuTime": -1, "queueTime": "PT0.0002S"`), ReqInfo{RequestID: 7, Queue: 200 * time.Microsecond, HasQueue: true}},
		{ev("latscope.Request", `"requestId": 7, "queueTime": "PT0.0002S", "serverWorkers": 16`), ReqInfo{RequestID: 7, Queue: 200 * time.Microsecond, HasQueue: true, Workers: 16}},
		{ev("latscope.Request", `"requestId": 7, "serverWorkers": 0`), ReqInfo{RequestID: 7}},
		{ev("latscope.TaskRun", `"requestId": 7, "taskId": 3, "cpuTime": null`), ReqInfo{RequestID: 7, TaskID: 3}},
		{ev("latscope.TaskRun", `"requestId": 7, "taskId": 3, "cpuTime": "N/A"`), ReqInfo{RequestID: 7, TaskID: 3}},
		{ev("latscope.TaskWait", `"requestId": 7, "taskId": 3, "cpuTime": "PT1S"`), ReqInfo{RequestID: 7, TaskID: 3}}, // a wait has no CPU of its own
	} {
		evs, err := decodeAllEvents(t, strings.NewReader(tt.in))
		if err != nil || len(evs) != 1 || evs[0].Req != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.in, evs, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{ev("latscope.Request", `"requestId": "7"`), `requestId: want an integer, got "\"7\""`},
		{ev("latscope.TaskSubmit", `"requestId": 7, "taskId": 1.5`), `taskId: want an integer, got "1.5"`},
		{ev("latscope.TaskRun", `"requestId": 7, "taskId": 3, "cpuTime": "PT1S`), "event 0"},
		{ev("latscope.TaskRun", `"requestId": 7, "taskId": 3, "cpuTime": true`), "cpuTime: want an integer"},
		{ev("jdk.CPUInformation", `"hwThreads": "two"`), `hwThreads: want an integer`},
		{ev("jdk.CPULoad", `"jvmUser": 0.5, "jvmSystem": "x", "machineTotal": 1`), `jvmSystem: want a number, got "\"x\""`},
		{ev("jdk.JVMInformation", `"jvmStartTime": "yesterday"`), "jvmStartTime: "},
	} {
		_, err := decodeAllEvents(t, strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.in, err, tt.want)
		}
	}
}
