package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/internal/tcpproxy"
)

// TestProxyCommand runs `latscope-lab proxy` against a real loopback server:
// answers come at least the delay late, and the stats are printed at the
// end.
func TestProxyCommand(t *testing.T) {
	ln := echoServer(t)
	addrFile := filepath.Join(t.TempDir(), "proxy.addr")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, &stdout, &stderr, []string{"proxy", "--to", ln.Addr().String(), "--delay", "30ms", "--addr-file", addrFile})
	}()
	addr := waitAddrFile(t, addrFile, done)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	io.WriteString(c, "ping\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if rtt := time.Since(t0); err != nil || line != "ping\n" || rtt < 30*time.Millisecond {
		t.Errorf("echo %q, %v after %v; want ping after at least 30ms", line, err, rtt)
	}
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"delaying every response chunk by 30ms", "proxy: 1 connections"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestProxyFlags: bad flags are refused before listening, in one line
// naming the flag; tcpproxy.Options.Validate does the checking.
func TestProxyFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "proxy: flag --to is required"},
		{[]string{"--to", "nohost"}, `proxy: flag --to "nohost": want HOST:PORT: missing port in address`},
		{[]string{"--to", ":99999"}, `proxy: flag --to ":99999": port "99999": want a number from 1 to 65535`},
		{[]string{"--to", "127.0.0.1:0"}, `flag --to "127.0.0.1:0": port "0"`},
		{[]string{"--to", ":5432"}, `flag --to ":5432": no host`},
		{[]string{"--to", "[::1"}, `flag --to "[::1": want HOST:PORT: missing ']' in address`},
		{[]string{"--to", "http://127.0.0.1:5432"}, `flag --to "http://127.0.0.1:5432": want HOST:PORT, not a URL`},
		{[]string{"--to", "postgres://u@db:5432/x"}, "not a URL"},
		{[]string{"--to", "localhost:postgresql"}, `port "postgresql": want a number from 1 to 65535`},
		{[]string{"--to", "127.0.0.1:1", "--delay", "-1s"}, "proxy: flag --delay -1s: want 0 to 1h0m0s"},
		{[]string{"--to", "127.0.0.1:1", "--delay", "2h"}, "proxy: flag --delay 2h0m0s: want 0 to 1h0m0s"},
		{[]string{"--to", "127.0.0.1:1", "--delay", "30"}, "flag -delay"},
		{[]string{"--to", "127.0.0.1:1", "x"}, `unexpected argument "x"`},
		{[]string{"--to", "127.0.0.1:1", "--listen", ""}, `flag --listen "": want [HOST]:PORT`},
		{[]string{"--to", "127.0.0.1:1", "--listen", "6432"}, `flag --listen "6432": want HOST:PORT: missing port in address`},
		{[]string{"--to", "127.0.0.1:1", "--listen", "127.0.0.1:99999"}, `flag --listen "127.0.0.1:99999": port "99999": want a number from 0 to 65535`},
		{[]string{"--to", "127.0.0.1:1", "--listen", "256.1.1.1:0"}, "proxy: flag --listen 256.1.1.1:0: cannot listen: "},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// a timeout, so that a proxy wrongly started ends the test
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := cli.Run(ctx, &stdout, &stderr, append([]string{"proxy"}, tc.args...))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line with %q", err, tc.want)
			}
			if stdout.Len() > 0 || stderr.Len() > 0 {
				t.Errorf("printed %q, %q; want nothing (refused before listening)", stdout.String(), stderr.String())
			}
		})
	}
}

// TestProxyServerDown: a proxy started before its server listens (that is
// a legitimate order) but says so at once, naming the server, and says so
// again when it closes a client because the server does not answer.
func TestProxyServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	to := ln.Addr().String()
	ln.Close()
	addrFile := filepath.Join(t.TempDir(), "proxy.addr")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, &stdout, &stderr, []string{"proxy", "--to", to, "--addr-file", addrFile})
	}()
	addr := waitAddrFile(t, addrFile, done)
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("read from the proxy = %d, %v; want EOF (server down)", n, err)
		}
		c.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("err = %v, want none: a server that is down is a warning", err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	wants := []string{
		"proxy: warning: the server " + to + " does not answer (connect: connection refused); listening anyway",
		"proxy: closed a client connection: the server " + to + " does not answer (connect: connection refused)",
	}
	// three failed dials within 10 s: one line each for the warning and the first failure
	if len(lines) != len(wants) {
		t.Errorf("stderr has %d lines, want %d:\n%s", len(lines), len(wants), stderr.String())
	}
	for i, want := range wants {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Errorf("stderr line %d does not start %q:\n%s", i+1, want, stderr.String())
		}
	}
	if want := "proxy: 3 connections (3 upstream dials failed)"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
	}
}

// waitAddrFile waits up to 10 s for the proxy to write its address.
func waitAddrFile(t *testing.T, path string, done <-chan error) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
		select {
		case err := <-done:
			t.Fatalf("the proxy ended before listening: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the proxy wrote no --addr-file within 10 s")
		}
	}
}

// TestProxyLog: --log writes the header before listening and one line per
// chunk, which tcpproxy.ReadLog reads back, each chunk with the
// traceparent of the statement it belongs to.
func TestProxyLog(t *testing.T) {
	ln := echoServer(t)
	dir := t.TempDir()
	addrFile, logFile := filepath.Join(dir, "proxy.addr"), filepath.Join(dir, "proxy.log")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, &stdout, &stderr, []string{"proxy", "--to", ln.Addr().String(), "--delay", "1ms", "--addr-file", addrFile, "--log", logFile})
	}()
	addr := waitAddrFile(t, addrFile, done)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	tps := []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	for _, tp := range tps {
		q := "/*traceparent='" + tp + "'*/ SELECT 1\n"
		io.WriteString(c, q)
		if line, err := r.ReadString('\n'); err != nil || line != q {
			t.Fatalf("echo %q, %v; want %q", line, err, q)
		}
	}
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := "logging every chunk to " + logFile; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
	}
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, events, err := tcpproxy.ReadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if h.To != ln.Addr().String() || h.Delay != time.Millisecond {
		t.Errorf("header %+v, want to %s, delay 1ms", h, ln.Addr())
	}
	got := map[string]int{}
	for _, e := range events {
		got[e.Dir.String()+" "+e.TraceParent.String()] += e.Bytes
	}
	for _, tp := range tps {
		n := len("/*traceparent='" + tp + "'*/ SELECT 1\n")
		for _, dir := range []string{"to-server", "to-client"} {
			if got[dir+" "+tp] != n {
				t.Errorf("%s %s: %d bytes logged, want %d (%v)", dir, tp, got[dir+" "+tp], n, got)
			}
		}
	}
}

// TestProxyLogRefused: a --log that cannot be created is refused at once,
// in one line naming the flag, before listening; a proxy that fails to
// start leaves no log behind.
func TestProxyLogRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
		gone string // a --log path that must not exist afterwards
	}{
		{[]string{"--log", filepath.Join(dir, "no", "such", "dir.log")}, `proxy: flag --log "` + filepath.Join(dir, "no", "such", "dir.log") + `": no such file or directory`, ""},
		{[]string{"--log", dir}, `proxy: flag --log "` + dir + `": is a directory`, ""},
		{[]string{"--log", filepath.Join(dir, "a.log"), "--listen", "256.1.1.1:0"}, "proxy: flag --listen 256.1.1.1:0: cannot listen: ", filepath.Join(dir, "a.log")},
		{[]string{"--log", filepath.Join(dir, "b.log"), "--addr-file", filepath.Join(dir, "no", "addr")}, "proxy: --addr-file", filepath.Join(dir, "b.log")},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			args := append([]string{"proxy", "--to", "127.0.0.1:1"}, tc.args...)
			err := cli.Run(ctx, &stdout, &stderr, args)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line with %q", err, tc.want)
			}
			if stdout.Len() > 0 {
				t.Errorf("printed %q; want nothing (refused before serving)", stdout.String())
			}
			if tc.gone != "" {
				if _, err := os.Stat(tc.gone); !os.IsNotExist(err) {
					t.Errorf("%s left behind (%v); want no log from a failed start", tc.gone, err)
				}
			}
		})
	}
}

// echoServer listens on loopback and echoes every connection until the
// test ends.
func echoServer(t *testing.T) net.Listener {
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
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln
}
