package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
)

// serve serves h on a loopback port and returns its base URL.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// traced wraps a handler in a trace task named by its route, as services
// do in a middleware.
func traced(name string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, end := task(r.Context(), name)
		defer end()
		h(w, r.WithContext(ctx))
	}
}

// get is the client's request: http.DefaultClient, the body read to the end.
func get(url string, close bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return err
		}
		req.Close = close
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	}
}

// writeItem writes a small JSON body.
func writeItem(w http.ResponseWriter, id string, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": id, "value": v})
}

// hashRounds is CPU work: n SHA-256 rounds over 1 KiB.
func hashRounds(n int) [32]byte {
	var buf [1024]byte
	var sum [32]byte
	for range n {
		sum = sha256.Sum256(buf[:])
		copy(buf[:], sum[:])
	}
	return sum
}
