package tcpproxy_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tcpproxy"
	"github.com/latscope/latscope/tracelog"
)

const (
	tpA = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tpB = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
)

func mustTP(t testing.TB, s string) tracelog.TraceParent {
	t.Helper()
	tp, err := tracelog.ParseTraceParent(s)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestLogRoundTrip: what LogWriter writes, ReadLog reads back unchanged.
func TestLogRoundTrip(t *testing.T) {
	h := tcpproxy.LogHeader{To: "127.0.0.1:5432", Delay: 30 * time.Millisecond}
	events := []tcpproxy.Event{
		{Conn: 1, Dir: tcpproxy.ToServer, TraceParent: mustTP(t, tpA), Read: 1000, Written: 1500, Bytes: 87},
		{Conn: 1, Dir: tcpproxy.ToClient, TraceParent: mustTP(t, tpA), Read: 2000, Written: 30_002_500, Bytes: 120, Delay: 30 * time.Millisecond},
		{Conn: 2, Dir: tcpproxy.ToClient, Read: 5, Written: 5, Bytes: 32 << 10},
	}
	var b bytes.Buffer
	w, err := tcpproxy.NewLogWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		w.Log(e)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "latscope-proxy-log v1 clock=CLOCK_MONOTONIC to=127.0.0.1:5432 delay=30ms\n" +
		"1 to-server 1000 1500 87 0 " + tpA + "\n" +
		"1 to-client 2000 30002500 120 30000000 " + tpA + "\n" +
		"2 to-client 5 5 32768 0 -\n"
	if b.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", b.String(), want)
	}
	gh, ge, err := tcpproxy.ReadLog(&b)
	if err != nil {
		t.Fatal(err)
	}
	if gh != h || !reflect.DeepEqual(ge, events) {
		t.Errorf("ReadLog = %+v, %+v\nwant %+v, %+v", gh, ge, h, events)
	}
}

// TestReadLogErrors: each bad line is refused in one line naming its
// number, as a *tcpproxy.LogError.
func TestReadLogErrors(t *testing.T) {
	const head = "latscope-proxy-log v1 clock=CLOCK_MONOTONIC to=db:5432 delay=30ms\n"
	const good = "1 to-client 10 20 5 10 -\n"
	for _, tc := range []struct {
		in   string
		line int
		want string
	}{
		{"", 1, "empty"},
		{"hello\n", 1, "not a proxy log"},
		{"latscope-proxy-log\n", 1, `version ""`},
		{"latscope-proxy-log v2 clock=CLOCK_MONOTONIC to=db:5432 delay=0s\n", 1, `version "v2": this reader knows v1`},
		{"latscope-proxy-log v1 clock=CLOCK_REALTIME to=db:5432 delay=0s\n", 1, `clock "CLOCK_REALTIME"`},
		{"latscope-proxy-log v1 clock=CLOCK_MONOTONIC to=db:5432\n", 1, "lacks delay="},
		{"latscope-proxy-log v1 clock=CLOCK_MONOTONIC to=db:5432 delay=-1s\n", 1, `delay "-1s"`},
		{"latscope-proxy-log v1 clock=CLOCK_MONOTONIC to=a to=b delay=0s\n", 1, `"to" twice`},
		{"latscope-proxy-log v1 clock=CLOCK_MONOTONIC to=a delay=0s junk\n", 1, `"junk": want KEY=VALUE`},
		{head + good + "1 to-client 10 20 5 10\n", 3, "6 fields, want 7"},
		{head + "0 to-client 10 20 5 10 -\n", 2, "conn 0"},
		{head + "1 sideways 10 20 5 10 -\n", 2, `dir "sideways"`},
		{head + "1 to-client -10 20 5 10 -\n", 2, `read "-10"`},
		{head + "1 to-client +10 20 5 10 -\n", 2, `read "+10"`},
		{head + "1 to-client 010 20 5 10 -\n", 2, `read "010"`},
		{head + "1 to-client 30 20 5 10 -\n", 2, "written 20 before read 30"},
		{head + "1 to-client 10 20 0 10 -\n", 2, "bytes 0"},
		{head + "1 to-client 10 20 99999 10 -\n", 2, "bytes 99999"},
		{head + "1 to-server 10 20 5 10 -\n", 2, "delay 10 on a to-server chunk"},
		{head + "1 to-client 10 20 5 99999999999999 -\n", 2, "delay 99999999999999"},
		{head + good + good + "1 to-client 10 20 5 10 00-xyz\n", 4, `traceparent "00-xyz"`},
		{head + "1 to-client 10 20 5 10 " + strings.ToUpper(tpA) + "\n", 2, "traceparent"},
		{head + "1  to-client 10 20 5 10 -\n", 2, "8 fields"},
		{head + "\n", 2, "1 fields"},
		{head + good + strings.Repeat("x", 5000) + "\n", 3, "longer than 4096"},
	} {
		_, _, err := tcpproxy.ReadLog(strings.NewReader(tc.in))
		le, ok := errors.AsType[*tcpproxy.LogError](err)
		if !ok || le.Line != tc.line || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadLog(%.60q) = %v; want a one-line *LogError at line %d with %q", tc.in, err, tc.line, tc.want)
		}
	}
}

// TestLogWriterError: a failed write is kept and returned by Flush.
func TestLogWriterError(t *testing.T) {
	if _, err := tcpproxy.NewLogWriter(failWriter{}, tcpproxy.LogHeader{To: "db:1"}); err == nil {
		t.Error("NewLogWriter on a failing writer: no error")
	}
	if _, err := tcpproxy.NewLogWriter(&bytes.Buffer{}, tcpproxy.LogHeader{To: "db 1"}); err == nil {
		t.Error("NewLogWriter with a space in To: no error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// FuzzReadLog: ReadLog never panics, and what it accepts is consistent
// and written back the same. Seeds: testdata/proxy-v1.log, a log written
// by `latscope-lab proxy --log` in front of a loopback echo server.
func FuzzReadLog(f *testing.F) {
	real, err := os.ReadFile(filepath.Join("testdata", "proxy-v1.log"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	lines := strings.SplitAfter(string(real), "\n")
	f.Add([]byte(lines[0]))
	f.Add([]byte(lines[0] + lines[1] + "1 to-client 10 5 1 0 -\n"))
	f.Add([]byte(strings.Replace(string(real), "v1", "v2", 1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, events, err := tcpproxy.ReadLog(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, e := range events {
			if e.Conn < 1 || e.Written < e.Read || e.Bytes < 1 || e.Delay < 0 || e.Dir != tcpproxy.ToServer && e.Dir != tcpproxy.ToClient {
				t.Fatalf("accepted impossible %+v", e)
			}
		}
		if strings.ContainsAny(h.To, " \t\r\n") {
			return // a header ReadLog reads but NewLogWriter refuses to write
		}
		var out bytes.Buffer
		w, err := tcpproxy.NewLogWriter(&out, h)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			w.Log(e)
		}
		w.Flush()
		h2, events2, err := tcpproxy.ReadLog(&out)
		if err != nil || h2 != h || !reflect.DeepEqual(events2, events) {
			t.Fatalf("written back and read again: %+v %+v %v; want %+v %+v", h2, events2, err, h, events)
		}
	})
}
