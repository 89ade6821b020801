package dbwait

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/tcpproxy"
	"github.com/latscope/latscope/internal/tracein"
)

// TestProxyHolds: a statement's network share is the union of the proxy's
// holds of its chunks, clipped to its span; chunks of another statement
// or of none do not count.
func TestProxyHolds(t *testing.T) {
	a, b := pglog.TraceParent{Flags: 1}, pglog.TraceParent{Flags: 1}
	a.TraceID[0], a.SpanID[0] = 1, 1
	b.TraceID[0], b.SpanID[0] = 2, 2
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	var log bytes.Buffer
	w, err := tcpproxy.NewLogWriter(&log, tcpproxy.LogHeader{To: "127.0.0.1:5432", Delay: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []tcpproxy.Event{
		{Conn: 1, Dir: tcpproxy.ToServer, Read: ms(1000), Written: ms(1000.1), Bytes: 80},                              // before any traceparent
		{Conn: 1, Dir: tcpproxy.ToServer, TraceParent: a, Read: ms(1010), Written: ms(1010.2), Bytes: 90},              // a's query
		{Conn: 1, Dir: tcpproxy.ToClient, TraceParent: a, Read: ms(1011), Written: ms(1045), Bytes: 60, Delay: ms(30)}, // a's answer, held 34 ms
		{Conn: 1, Dir: tcpproxy.ToClient, TraceParent: a, Read: ms(1020), Written: ms(1050), Bytes: 20, Delay: ms(30)}, // overlapping: 5 ms more
		{Conn: 2, Dir: tcpproxy.ToClient, TraceParent: b, Read: ms(1011), Written: ms(1041), Bytes: 60, Delay: ms(30)}, // another statement's
		{Conn: 1, Dir: tcpproxy.ToClient, TraceParent: a, Read: ms(1060), Written: ms(1090), Bytes: 20, Delay: ms(30)}, // after a's span: clipped away
	} {
		w.Log(e)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h, err := readProxyHolds("proxy.log", log.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	net, ok := h.network(a, tracein.Time(ms(1009)), tracein.Time(ms(1052)))
	if want := ms(0.2) + ms(39); !ok || net != want {
		t.Errorf("a's network share = %v, %v; want %v, true", net, ok, want)
	}
	if _, ok := h.network(pglog.TraceParent{}, 0, tracein.Time(ms(2000))); ok {
		t.Error("a statement without a traceparent has a share")
	}
	if net, ok := h.network(b, tracein.Time(ms(1030)), tracein.Time(ms(1100))); !ok || net != ms(11) {
		t.Errorf("b clipped to [1030, 1100] ms = %v, %v; want 11ms, true", net, ok)
	}
}

// TestShareTruth: the right verdicts by the measured part's share.
func TestShareTruth(t *testing.T) {
	net, cpu := []dbwait.Verdict{dbwait.Network}, []dbwait.Verdict{dbwait.Runnable}
	for _, tc := range []struct {
		outside, part time.Duration
		want          []dbwait.Verdict
	}{
		{100, 90, []dbwait.Verdict{dbwait.Network}},
		{100, 60, []dbwait.Verdict{dbwait.Network, dbwait.Mixed}},
		{100, 50, []dbwait.Verdict{dbwait.Network, dbwait.Mixed, dbwait.Runnable}},
		{100, 40, []dbwait.Verdict{dbwait.Mixed, dbwait.Runnable}},
		{100, 20, []dbwait.Verdict{dbwait.Runnable}},
	} {
		if got := shareTruth(tc.outside, tc.part, net, cpu); !slices.Equal(got, tc.want) {
			t.Errorf("shareTruth(%d, %d) = %v, want %v", tc.outside, tc.part, got, tc.want)
		}
	}
}
