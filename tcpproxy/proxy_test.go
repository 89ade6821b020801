package tcpproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/tcpproxy"
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

// TestUpstreamDown: a refused upstream closes the client connection and
// is counted.
func TestUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := start(t, tcpproxy.Options{To: addr})
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
}

func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		opts tcpproxy.Options
		want string
	}{
		{tcpproxy.Options{}, "no upstream"},
		{tcpproxy.Options{To: "127.0.0.1:1", Delay: -time.Second}, "negative"},
		{tcpproxy.Options{To: "127.0.0.1:1", Listen: "256.0.0.1:0"}, "listen 256.0.0.1:0"},
	} {
		_, err := tcpproxy.Start(context.Background(), tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %v, want an error with %q", tc.opts, err, tc.want)
		}
	}
}
