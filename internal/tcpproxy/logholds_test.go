package tcpproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/tcpproxy"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/tracelog"
)

// answer replies to each line with two writes a moment apart, so that a
// reply may come in more than one chunk: "row N\n" then "done\n".
func answer(c net.Conn) {
	r := bufio.NewReader(c)
	for n := 0; ; n++ {
		if _, err := r.ReadString('\n'); err != nil {
			return
		}
		io.WriteString(c, fmt.Sprintf("row %d\n", n))
		time.Sleep(time.Millisecond)
		if _, err := io.WriteString(c, "done\n"); err != nil {
			return
		}
	}
}

// statement is one statement a client sent and the reply it read.
type statement struct {
	conn         int
	tp           tracelog.TraceParent
	sent, answer int // bytes
}

// runStatements opens conns connections to addr and sends n statements on
// each, one at a time, each carrying its own traceparent as the agent
// writes it; it returns them.
func runStatements(t *testing.T, addr string, conns, n int) []statement {
	t.Helper()
	var mu sync.Mutex
	var out []statement
	var wg sync.WaitGroup
	for k := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer c.Close()
			r := bufio.NewReader(c)
			for i := range n {
				var tp tracelog.TraceParent
				tp.TraceID[0], tp.TraceID[15] = byte(k+1), byte(i+1)
				tp.SpanID[7], tp.Flags = 1, 1
				q := tracelog.SQLComment(tp, "route", "GET /x") + fmt.Sprintf(" SELECT %d\n", i)
				if _, err := io.WriteString(c, q); err != nil {
					t.Error(err)
					return
				}
				row, err1 := r.ReadString('\n')
				done, err2 := r.ReadString('\n')
				if err1 != nil || err2 != nil || done != "done\n" {
					t.Errorf("conn %d statement %d: %q %q %v %v", k, i, row, done, err1, err2)
					return
				}
				mu.Lock()
				out = append(out, statement{conn: k, tp: tp, sent: len(q), answer: len(row) + len(done)})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// logged starts a proxy to an answering server with a Log that collects
// the events; they are complete once the proxy is closed.
func logged(t *testing.T, delay time.Duration) (*tcpproxy.Proxy, func() []tcpproxy.Event) {
	return loggedTo(t, server(t, answer), delay)
}

// checkJoins: every chunk either way carries its statement's traceparent,
// and the bytes logged per statement and direction are the bytes sent and
// answered.
func checkJoins(t *testing.T, stmts []statement, events []tcpproxy.Event) {
	t.Helper()
	type key struct {
		tp  tracelog.TraceParent
		dir tcpproxy.Dir
	}
	bytes := map[key]int{}
	for _, e := range events {
		if !e.TraceParent.IsValid() {
			t.Errorf("event %+v: no traceparent; every chunk follows a statement", e)
		}
		bytes[key{e.TraceParent, e.Dir}] += e.Bytes
	}
	for _, s := range stmts {
		if got := bytes[key{s.tp, tcpproxy.ToServer}]; got != s.sent {
			t.Errorf("statement %s: %d bytes to the server logged, sent %d", s.tp, got, s.sent)
		}
		if got := bytes[key{s.tp, tcpproxy.ToClient}]; got != s.answer {
			t.Errorf("statement %s: %d bytes to the client logged, answered %d", s.tp, got, s.answer)
		}
	}
	if len(bytes) != 2*len(stmts) {
		t.Errorf("%d (traceparent, direction) pairs logged, want %d", len(bytes), 2*len(stmts))
	}
}

// TestLogEvents: with Options.Log, every chunk is logged with its
// connection, direction, statement and length (no clock is judged here).
func TestLogEvents(t *testing.T) {
	p, events := logged(t, 0)
	stmts := runStatements(t, p.Addr(), 2, 10)
	ev := events()
	checkJoins(t, stmts, ev)
	conns := map[int64]bool{}
	for _, e := range ev {
		conns[e.Conn] = true
		if e.Written < e.Read || e.Read <= 0 {
			t.Errorf("event %+v: want 0 < Read <= Written", e)
		}
	}
	if len(conns) != 2 || !conns[1] || !conns[2] {
		t.Errorf("connections logged %v, want 1 and 2", conns)
	}
}

// TestLogHolds: on loopback at a 30 ms delay, every reply chunk's hold on
// the proxy's own clock (Written − Read) is at least the delay, and each
// chunk either way joins its statement's traceparent. No upper bound is
// asserted: the writer wakes after the due time and a busy host can wake
// it arbitrarily late; the distribution of hold − delay is logged. Read
// and Written are placed on CLOCK_MONOTONIC, which is logged against
// hostsig.Monotonic read before and after.
func TestLogHolds(t *testing.T) {
	tier.Busy(t)
	const delay = 30 * time.Millisecond
	before, err := hostsig.Monotonic()
	if err != nil {
		t.Fatal(err)
	}
	p, events := logged(t, delay)
	stmts := runStatements(t, p.Addr(), 2, 20)
	ev := events()
	after, _ := hostsig.Monotonic()
	checkJoins(t, stmts, ev)
	var late, up []time.Duration
	first, last := ev[0].Read, ev[0].Written
	for _, e := range ev {
		first, last = min(first, e.Read), max(last, e.Written)
		if e.Dir == tcpproxy.ToServer {
			up = append(up, e.Hold())
			continue
		}
		if e.Delay != delay || e.Hold() < delay {
			t.Errorf("reply chunk %+v: hold %v, delay %v; want the hold >= the delay %v", e, e.Hold(), e.Delay, delay)
		}
		late = append(late, e.Hold()-delay)
	}
	if len(late) < len(stmts) {
		t.Fatalf("%d reply chunks for %d statements", len(late), len(stmts))
	}
	t.Logf("%d reply chunks: hold − delay %s", len(late), spread(late))
	t.Logf("%d request chunks: hold %s", len(up), spread(up))
	t.Logf("clock: first read %v after hostsig.Monotonic before, last write %v before it after", first-before, after-last)
}

// spread formats the min, median, p90, p99 and max of d.
func spread(d []time.Duration) string {
	slices.Sort(d)
	q := func(f float64) time.Duration { return d[int(f*float64(len(d)-1))] }
	return strings.Join([]string{
		"min " + d[0].String(), "p50 " + q(0.5).String(), "p90 " + q(0.9).String(),
		"p99 " + q(0.99).String(), "max " + d[len(d)-1].String(),
	}, ", ")
}
