package tcpproxy_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/tcpproxy"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/tracelog"
)

// TestLogPostgres: pgx through the proxy to a real PostgreSQL, each
// statement with its traceparent in a comment as the agent sends it, in
// pgx's default mode (a Parse and Describe round trip, then Bind and
// Execute, each statement's text new to the cache) and in the simple
// protocol. Every statement's traceparent is found on the client's
// stream, every statement has reply chunks carrying it, and each reply
// chunk is held at least the 30 ms delay. The rows are the wire's: the
// chunks before the first statement (start-up, authentication) carry none.
func TestLogPostgres(t *testing.T) {
	tier.Busy(t)
	cluster := pgtest.Start(t)
	const delay = 30 * time.Millisecond
	p, events := loggedTo(t, fmt.Sprintf("127.0.0.1:%d", cluster.Port()), delay)
	ctx := context.Background()
	var sent []tracelog.TraceParent
	for m, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		_, port, _ := net.SplitHostPort(p.Addr())
		cfg, err := pgx.ParseConfig(fmt.Sprintf("host=127.0.0.1 port=%s user=postgres dbname=postgres sslmode=disable", port))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DefaultQueryExecMode = mode
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			var tp tracelog.TraceParent
			tp.TraceID[0], tp.TraceID[15], tp.SpanID[7], tp.Flags = byte(m+1), byte(i+1), 1, 1
			var n int
			sql := tracelog.SQLComment(tp, "route", "GET /x") + " SELECT $1::int + count(*)::int FROM generate_series(1, 100)"
			if err := conn.QueryRow(ctx, sql, i).Scan(&n); err != nil || n != i+100 {
				t.Fatalf("mode %v statement %d: %d, %v", mode, i, n, err)
			}
			sent = append(sent, tp)
		}
		conn.Close(ctx)
	}
	ev := events()
	replies := map[tracelog.TraceParent]int{}
	requests := map[tracelog.TraceParent]int{}
	var late []time.Duration
	for _, e := range ev {
		if e.Dir == tcpproxy.ToServer {
			requests[e.TraceParent]++
			continue
		}
		replies[e.TraceParent]++
		if e.Hold() < delay {
			t.Errorf("reply chunk %+v: hold %v < the delay %v", e, e.Hold(), delay)
		}
		late = append(late, e.Hold()-delay)
	}
	perStatement := map[int]int{} // reply chunks → statements
	for _, tp := range sent {
		if requests[tp] == 0 || replies[tp] == 0 {
			t.Errorf("statement %s: %d request and %d reply chunks logged with it; want both", tp, requests[tp], replies[tp])
		}
		perStatement[replies[tp]]++
	}
	t.Logf("%d statements, %d chunks, %d reply chunks before any statement; statements by reply chunks %v; hold − delay %s",
		len(sent), len(ev), replies[tracelog.TraceParent{}], perStatement, spread(late))
}

// loggedTo is logged for a given upstream.
func loggedTo(t *testing.T, to string, delay time.Duration) (*tcpproxy.Proxy, func() []tcpproxy.Event) {
	t.Helper()
	var mu sync.Mutex
	var events []tcpproxy.Event
	p := start(t, tcpproxy.Options{To: to, Delay: delay, Log: func(e tcpproxy.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	return p, func() []tcpproxy.Event {
		p.Close()
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(events)
	}
}
