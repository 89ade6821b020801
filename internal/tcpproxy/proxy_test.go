package tcpproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tcpproxy"
	"github.com/latscope/latscope/internal/tier"
)

// server is a real loopback TCP server running handle for each connection.
func server(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T, opts tcpproxy.Options) *tcpproxy.Proxy {
	t.Helper()
	p, err := tcpproxy.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// lineEcho answers every line with the same line.
func lineEcho(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if _, err := io.WriteString(c, line); err != nil {
			return
		}
	}
}

// TestDelayPerResponse: every answer comes at least Delay after its
// request; the requests themselves are not delayed.
func TestDelayPerResponse(t *testing.T) {
	tier.Timing(t)
	const delay = 40 * time.Millisecond
	p := start(t, tcpproxy.Options{To: server(t, lineEcho), Delay: delay})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for i := range 5 {
		t0 := time.Now()
		if _, err := io.WriteString(c, "ping\n"); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if rtt := time.Since(t0); rtt < delay {
			t.Errorf("round trip %d: %v, want at least the delay %v", i, rtt, delay)
		}
		if line != "ping\n" {
			t.Errorf("got %q", line)
		}
	}
	st := p.Stats()
	for deadline := time.Now().Add(2 * time.Second); st.ToClient < 25 && time.Now().Before(deadline); st = p.Stats() {
		time.Sleep(time.Millisecond) // the count follows the write the client has already read
	}
	if st.Conns != 1 || st.Chunks < 5 || st.ToClient != 25 || st.ToUpstream != 25 {
		t.Errorf("stats %+v: want 1 conn, >= 5 chunks, 25 bytes each way", st)
	}
}

// TestDelayLineDoesNotAddUp: two chunks the server sends 50 ms apart each
// arrive Delay late, so the second comes about 50 ms after the first, not
// another Delay later.
func TestDelayLineDoesNotAddUp(t *testing.T) {
	tier.Timing(t)
	const delay, gap = 300 * time.Millisecond, 50 * time.Millisecond
	addr := server(t, func(c net.Conn) {
		io.WriteString(c, "a")
		time.Sleep(gap)
		io.WriteString(c, "b")
	})
	p := start(t, tcpproxy.Options{To: addr, Delay: delay})
	t0 := time.Now()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := make([]byte, 1)
	var at [2]time.Duration
	for i := range at {
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		at[i] = time.Since(t0)
	}
	if at[0] < delay || at[1] < delay+gap {
		t.Errorf("chunks at %v, %v; want >= %v and >= %v", at[0], at[1], delay, delay+gap)
	}
	if at[1] >= 2*delay {
		t.Errorf("second chunk at %v: the delays added up (want < %v)", at[1], 2*delay)
	}
}

// TestBulkAndHalfClose: a large upload is echoed back intact, in order,
// and the client's half-close reaches the server and comes back as EOF.
func TestBulkAndHalfClose(t *testing.T) {
	p := start(t, tcpproxy.Options{To: server(t, func(c net.Conn) { io.Copy(c, c) }), Delay: time.Millisecond, MaxQueued: 4})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, 3<<20)
	rand.Read(data)
	go func() {
		c.Write(data)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("echoed %d bytes, want the %d sent, unchanged", len(got), len(data))
	}
}

// TestCloseEndsConnections: Close returns with connections open and the
// client sees them end.
func TestCloseEndsConnections(t *testing.T) {
	tier.Timing(t)
	p := start(t, tcpproxy.Options{To: server(t, lineEcho), Delay: time.Hour})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "held for an hour\n")
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10 s with a chunk waiting")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("read after Close succeeded; want the connection closed")
	}
}

// TestUpstreamDown: a refused upstream closes the client connection, is
// counted and reported to DialFailed.
func TestUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	failed := make(chan error, 10)
	p := start(t, tcpproxy.Options{To: addr, DialFailed: func(err error) { failed <- err }})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read = %d, %v; want EOF", n, err)
	}
	if st := p.Stats(); st.Failed != 1 {
		t.Errorf("Failed = %d, want 1", st.Failed)
	}
	select {
	case err := <-failed:
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("DialFailed(%v), want the error naming %s", err, addr)
		}
	default:
		t.Error("DialFailed was not called")
	}
}

// TestStartErrors: Start refuses bad options before listening, with an
// *OptionError naming the field; a listen failure names the address.
func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		opts   tcpproxy.Options
		option string // of the *OptionError; "" = another error
		want   string
	}{
		{tcpproxy.Options{}, "To", `To "": no upstream address`},
		{tcpproxy.Options{To: "nohost"}, "To", `To "nohost": want HOST:PORT: missing port in address`},
		{tcpproxy.Options{To: "127.0.0.1"}, "To", "missing port in address"},
		{tcpproxy.Options{To: ":99999"}, "To", `port "99999": want a number from 1 to 65535`},
		{tcpproxy.Options{To: ":5432"}, "To", "no host"},
		{tcpproxy.Options{To: "127.0.0.1:0"}, "To", `port "0": want a number from 1 to 65535`},
		{tcpproxy.Options{To: "127.0.0.1:65536"}, "To", `port "65536"`},
		{tcpproxy.Options{To: "127.0.0.1:-1"}, "To", `port "-1"`},
		{tcpproxy.Options{To: "127.0.0.1:+80"}, "To", `port "+80"`},
		{tcpproxy.Options{To: "localhost:postgresql"}, "To", `port "postgresql": want a number`},
		{tcpproxy.Options{To: "[::1"}, "To", "missing ']' in address"},
		{tcpproxy.Options{To: "::1:5432"}, "To", "too many colons"},
		{tcpproxy.Options{To: "[nohost]:5432"}, "To", "not an IPv6 address"},
		{tcpproxy.Options{To: "http://127.0.0.1:80"}, "To", "not a URL"},
		{tcpproxy.Options{To: "127.0.0.1:80/db"}, "To", `port "80/db"`},
		{tcpproxy.Options{To: "db/x:80"}, "To", `host "db/x"`},
		{tcpproxy.Options{To: "a b:80"}, "To", `host "a b"`},
		{tcpproxy.Options{To: "127.0.0.1:1", Listen: "127.0.0.1"}, "Listen", `Listen "127.0.0.1": want HOST:PORT`},
		{tcpproxy.Options{To: "127.0.0.1:1", Listen: "127.0.0.1:99999"}, "Listen", `port "99999": want a number from 0 to 65535`},
		{tcpproxy.Options{To: "127.0.0.1:1", Listen: "tcp://127.0.0.1:0"}, "Listen", "not a URL"},
		{tcpproxy.Options{To: "127.0.0.1:1", Delay: -time.Second}, "Delay", "Delay -1s: want 0 to 1h0m0s"},
		{tcpproxy.Options{To: "127.0.0.1:1", Delay: tcpproxy.MaxDelay + 1}, "Delay", "want 0 to 1h0m0s"},
		{tcpproxy.Options{To: "127.0.0.1:1", MaxQueued: -1}, "MaxQueued", "MaxQueued -1"},
		{tcpproxy.Options{To: "127.0.0.1:1", MaxQueued: tcpproxy.MaxMaxQueued + 1}, "MaxQueued", "MaxQueued 65537"},
		{tcpproxy.Options{To: "127.0.0.1:1", DialTimeout: -1}, "DialTimeout", "DialTimeout -1ns"},
		{tcpproxy.Options{To: "127.0.0.1:1", Listen: "256.0.0.1:0"}, "Listen", "Listen 256.0.0.1:0: cannot listen: "},
	} {
		p, err := tcpproxy.Start(context.Background(), tc.opts)
		if err == nil {
			p.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Start(%+v) = %v, want one line with %q", tc.opts, err, tc.want)
		}
		oe, ok := errors.AsType[*tcpproxy.OptionError](err)
		if got := ""; ok {
			got = oe.Option
			if got != tc.option {
				t.Errorf("Start(%+v): option %q, want %q", tc.opts, got, tc.option)
			}
		} else if tc.option != "" {
			t.Errorf("Start(%+v) = %v, want an *OptionError for %s", tc.opts, err, tc.option)
		}
	}
}

// TestValidAddrs: the forms of address Validate accepts.
func TestValidAddrs(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		listen bool
	}{
		{"127.0.0.1:5432", false},
		{"localhost:1", false},
		{"db.example.test:65535", false},
		{"my_db-1:5432", false},
		{"[::1]:5432", false},
		{"[fe80::1%eth0]:5432", false},
		{"127.0.0.1:0", true},
		{":6432", true},
		{":0", true},
		{"[::1]:0", true},
	} {
		if err := tcpproxy.CheckAddr(tc.addr, tc.listen); err != nil {
			t.Errorf("CheckAddr(%q, listen %v) = %v, want nil", tc.addr, tc.listen, err)
		}
	}
}

// TestListenTaken: a listen address another socket holds is an
// *OptionError for Listen that says so once (not the address twice) and
// still wraps the system's error.
func TestListenTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p, err := tcpproxy.Start(context.Background(), tcpproxy.Options{To: "127.0.0.1:1", Listen: ln.Addr().String()})
	if err == nil {
		p.Close()
		t.Fatal("two listeners on one address")
	}
	want := "tcpproxy: Listen " + ln.Addr().String() + ": cannot listen: bind: address already in use"
	if oe, ok := errors.AsType[*tcpproxy.OptionError](err); !ok || oe.Option != "Listen" || err.Error() != want || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("err = %v, want %q wrapping EADDRINUSE", err, want)
	}
}
