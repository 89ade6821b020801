package agent

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/tracelog"
)

// childEnv names the part of a test that runs in a child process (the
// test binary re-executed), because on failure it kills the process.
const childEnv = "LATSCOPE_AGENT_TEST_CHILD"

// runChild re-executes the test binary to run only the test named test,
// with childEnv=test, and fails t with the child's output unless it
// passes.
func runChild(t *testing.T, test string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+test)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if len(out) > 4000 { // a fatal error prints every goroutine's stack
			out = out[:4000]
		}
		t.Fatalf("child %s: %v\n%s", test, err, out)
	}
	t.Logf("child %s passed", test)
}

// okRoundTripper answers every request with an empty 200.
type okRoundTripper struct{}

func (okRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

// TestLongStringsTraced sends a 70 KB path through the real middleware,
// with the flight recorder on and a Route hook that returns the path (as a
// catch-all hook would), makes the request slow, calls out to a 70 KB host
// name and logs a 120 KB module name. The runtime's tracer kills the
// process ("fatal error: traceRegion: alloc too large") for a task or
// region name over about 64 KiB, and cuts every string it writes to
// tracelog.MaxString bytes, wherever that falls in a character; so every
// one must come out of the snapshot cut by the agent, on a character
// boundary, with tracelog.CutMark. The requests run in a child process, so
// that the crash fails this test instead of the whole run.
func TestLongStringsTraced(t *testing.T) {
	if os.Getenv(childEnv) != t.Name() {
		runChild(t, t.Name())
		return
	}
	longPath := "/" + strings.Repeat("€", 70_000/3) // 3 bytes each: a cut at 1024 bytes splits one
	longHost := strings.Repeat("h", 70_000) + ".example"
	snaps := make(chan string, 1)
	a, err := New(Options{
		Dir:         t.TempDir(),
		Route:       func(r *http.Request) string { return r.URL.Path },
		Trigger:     Trigger{Threshold: time.Nanosecond},
		MinInterval: time.Hour,
		Module:      strings.Repeat("€", 40_000),
		ProbeEvery:  -1,
		OnSnapshot:  sendSnapshot(t, snaps),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	client := &http.Client{Transport: Transport(okRoundTripper{})}
	srv := httptest.NewServer(a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://"+longHost+"/", nil)
		if err != nil {
			t.Error(err)
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
		time.Sleep(time.Millisecond)
	})))
	defer srv.Close()
	if code, _ := get(t, nil, srv.URL+longPath); code != 200 {
		t.Fatalf("long path: status %d", code)
	}
	var path string
	select {
	case path = <-snaps:
	case <-time.After(30 * time.Second):
		t.Fatal("no snapshot within 30 s of the slow request")
	}
	evs := traceFileEvents(t, path)
	checkCut := func(what, s string) {
		t.Helper()
		if len(s) > tracelog.MaxString || !utf8.ValidString(s) || !strings.Contains(s, tracelog.CutMark) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v, cut mark %v; want at most %d bytes, valid, marked (…%q)",
				what, len(s), utf8.ValidString(s), strings.Contains(s, tracelog.CutMark), tracelog.MaxString, s[max(len(s)-20, 0):])
		}
	}
	var task, region string
	for _, ev := range evs {
		switch {
		case ev.Kind == agenttest.KindTaskBegin && strings.HasPrefix(ev.Name, "/€"):
			task = ev.Name
		case ev.Kind == agenttest.KindRegionBegin && strings.HasPrefix(ev.Name, tracelog.HTTPRegionPrefix):
			region = ev.Name
		}
	}
	if task == "" || region == "" {
		t.Fatalf("the snapshot holds no request task (%q) or no outbound region (%q)", task, region)
	}
	checkCut("task name", task)
	checkCut("outbound region", region)
	slow := logs(evs, tracelog.Slow)
	if len(slow) != 1 {
		t.Fatalf("%d %s logs, want 1", len(slow), tracelog.Slow)
	}
	checkCut(tracelog.Slow+" log", slow[0].Message)
	if !strings.Contains(slow[0].Message, " traceparent=00-") {
		t.Errorf("%s log %q…: the traceparent at its end was cut off", tracelog.Slow, slow[0].Message[:40])
	}
	mods := logs(evs, tracelog.Module)
	if len(mods) == 0 {
		t.Fatalf("no %s log", tracelog.Module)
	}
	checkCut(tracelog.Module+" log", mods[0].Message)
}

// TestBoundRoute: the route Handler uses everywhere is cut to
// tracelog.MaxString, and a short one is the same string (no copy).
func TestBoundRoute(t *testing.T) {
	short := "GET /items/{id}"
	if got := tracelog.Bound(short, tracelog.MaxString); got != short {
		t.Errorf("Bound(%q) = %q", short, got)
	}
	long := strings.Repeat("x", 100_000)
	got := tracelog.Bound(long, tracelog.MaxString)
	if len(got) > tracelog.MaxString || !strings.HasSuffix(got, tracelog.CutMark) || !bytes.HasPrefix([]byte(long), []byte(strings.TrimSuffix(got, tracelog.CutMark))) {
		t.Errorf("Bound(100 KB) = %d bytes ending %q", len(got), got[max(len(got)-20, 0):])
	}
}

// TestSlowTextBound: a tracelog.Slow message fits in tracelog.MaxString
// whatever the route, with its traceparent whole and its route quoted.
func TestSlowTextBound(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, route := range []string{
		"GET /x",
		strings.Repeat("a", tracelog.MaxString),
		strings.Repeat("\x01", tracelog.MaxString), // quoted: 4 bytes each
		strings.Repeat("\xff", tracelog.MaxString), // invalid UTF-8: 4 bytes each
		strings.Repeat("€", tracelog.MaxString/3),
		strings.Repeat("\u00ad", tracelog.MaxString/2), // not printable: 6 bytes each
	} {
		msg := slowText(route, 300*time.Millisecond, 150*time.Millisecond, tp)
		q, rest, ok := strings.Cut(strings.TrimPrefix(msg, "route="), " latency_ns=")
		uq, err := strconv.Unquote(q)
		if len(msg) > tracelog.MaxString || !ok || err != nil || !strings.HasSuffix(rest, " traceparent="+tp) {
			t.Errorf("route of %d bytes: message of %d bytes %.60q…%q (unquote: %v)", len(route), len(msg), msg, msg[max(len(msg)-70, 0):], err)
			continue
		}
		if len(route) < 100 && uq != route || len(route) >= 100 && !strings.HasSuffix(uq, tracelog.CutMark) {
			t.Errorf("route of %d bytes logged as %.40q", len(route), uq)
		}
	}
}

// sendSnapshot is an Options.OnSnapshot that sends each snapshot's path to
// snaps and fails t on a snapshot's error.
func sendSnapshot(t *testing.T, snaps chan<- string) func(string, error) {
	return func(path string, err error) {
		if err != nil {
			t.Errorf("snapshot: %v", err)
		}
		snaps <- path
	}
}
