package agent

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/tier"
)

// patience bounds every wait in the tests of the endpoints' timeouts: far
// longer than the timeouts they set (100 ms), so that a loaded machine
// does not fail them, and far shorter than no timeout at all.
const patience = 5 * time.Second

// keepAlive sends one keep-alive request for the endpoints' index on c and
// reads its response.
func keepAlive(t *testing.T, c net.Conn, br *bufio.Reader) {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+EndpointsPrefix+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(patience))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("keep-alive request: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("keep-alive request: status %d, close %v", resp.StatusCode, resp.Close)
	}
}

// closedByServer waits up to patience for the server to close c (EOF or
// reset), and fails t if it does not.
func closedByServer(t *testing.T, what string, c net.Conn, br *bufio.Reader) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(patience))
	_, err := br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("%s: the connection is still open after %v", what, patience)
	} else if err == nil {
		t.Errorf("%s: the server sent data, want it to close the connection", what)
	}
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// TestEndpointsTimeouts: over real TCP, the endpoints' server closes an
// idle keep-alive connection after ListenIdleTimeout and one that never
// finishes its headers after ListenReadTimeout; and a request that runs
// longer than ListenReadTimeout (an on-demand trace) is not cut by it.
func TestEndpointsTimeouts(t *testing.T) {
	tier.Timing(t)
	a, err := New(Options{NoRecorder: true, ProbeEvery: -1, Listen: "127.0.0.1:0",
		ListenIdleTimeout: 100 * time.Millisecond, ListenReadTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	idle, br := dial(t, a.Addr())
	keepAlive(t, idle, br)
	closedByServer(t, "idle keep-alive connection", idle, br)

	slow, br := dial(t, a.Addr())
	if _, err := io.WriteString(slow, "GET "+EndpointsPrefix+" HTTP/1.1\r\nHost: x\r\n"); err != nil { // no blank line: headers unfinished
		t.Fatal(err)
	}
	closedByServer(t, "unfinished headers", slow, br)

	silent, br := dial(t, a.Addr())
	closedByServer(t, "connection that sends nothing", silent, br)

	resp, err := http.Get("http://" + a.Addr() + EndpointsPrefix + "trace?seconds=0.5")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if why := resp.Trailer.Get(TraceStopTrailer); resp.StatusCode != 200 || why != "seconds" {
		t.Errorf("a 0.5 s trace with a 100 ms read timeout: status %d, stopped by %q, want 200 and \"seconds\"", resp.StatusCode, why)
	}
}

// TestEndpointsMaxConns: over real TCP, with ListenMaxConns 4, four open
// keep-alive connections hold every slot: a fifth is not served until one
// of them closes, and then it is.
func TestEndpointsMaxConns(t *testing.T) {
	tier.Timing(t)
	const maxConns = 4
	a, err := New(Options{NoRecorder: true, ProbeEvery: -1, Listen: "127.0.0.1:0", ListenMaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var held []net.Conn
	for range maxConns {
		c, br := dial(t, a.Addr())
		keepAlive(t, c, br)
		held = append(held, c)
	}
	extra, br := dial(t, a.Addr()) // the kernel completes the handshake; the server must not accept
	if _, err := io.WriteString(extra, "GET "+EndpointsPrefix+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	extra.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection beyond ListenMaxConns (%d) got %v, want no answer while the others are open", maxConns, err)
	}
	held[0].Close()
	extra.SetReadDeadline(time.Now().Add(patience))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("once a slot was free, the waiting connection got %v %v, want 200", resp, err)
	}
	resp.Body.Close()
}

// TestEndpointsDefaultLimits: the defaults are on when the options are
// zero.
func TestEndpointsDefaultLimits(t *testing.T) {
	a, err := New(Options{NoRecorder: true, ProbeEvery: -1, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	d := DefaultOptions
	if d.ListenIdleTimeout <= 0 || d.ListenReadTimeout <= 0 || d.ListenMaxConns <= 0 {
		t.Fatalf("DefaultOptions: idle %v, read %v, conns %d: want every limit on", d.ListenIdleTimeout, d.ListenReadTimeout, d.ListenMaxConns)
	}
	if a.srv.IdleTimeout != d.ListenIdleTimeout || a.srv.ReadHeaderTimeout != d.ListenReadTimeout || a.srv.ReadTimeout != d.ListenReadTimeout {
		t.Errorf("server timeouts idle %v, header %v, read %v; want %v, %v, %v", a.srv.IdleTimeout, a.srv.ReadHeaderTimeout, a.srv.ReadTimeout,
			d.ListenIdleTimeout, d.ListenReadTimeout, d.ListenReadTimeout)
	}
}
