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
)

// TestProxyCommand runs `latscope proxy` against a real loopback server:
// answers come at least the delay late, and the stats are printed at the
// end.
func TestProxyCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	addrFile := filepath.Join(t.TempDir(), "proxy.addr")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, &stdout, &stderr, []string{"proxy", "--to", ln.Addr().String(), "--delay", "30ms", "--addr-file", addrFile})
	}()
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; {
		if b, err := os.ReadFile(addrFile); err == nil {
			addr = strings.TrimSpace(string(b))
		} else if time.Now().After(deadline) {
			t.Fatal("the proxy wrote no --addr-file within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
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

func TestProxyFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "proxy: flag --to is required"},
		{[]string{"--to", "127.0.0.1:1", "--delay", "-1s"}, "flag --delay -1s: want 0 or more"},
		{[]string{"--to", "127.0.0.1:1", "x"}, `unexpected argument "x"`},
		{[]string{"--to", "127.0.0.1:1", "--listen", "256.1.1.1:0"}, "proxy: tcpproxy: listen 256.1.1.1:0"},
	} {
		_, _, err := runCLI(t, append([]string{"proxy"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("proxy %q: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}
