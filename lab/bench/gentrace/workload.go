package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// workload is the service under trace and the parts it talks to, all on
// 127.0.0.1.
type workload struct {
	opts     Options
	svcURL   string
	upURL    string
	up       *http.Client     // service → upstream
	pool     chan *dbConn     // idle database connections (contended)
	jobs     chan job         // handoff to the worker goroutines
	authMu   sync.Mutex       // a shared cache every request and the janitor contend for
	cache    map[uint64]int64 // guarded by authMu
	seq      atomic.Uint64
	requests atomic.Int64
	stop     []func()
}

type dbConn struct {
	c net.Conn
	r *bufio.Reader
}

type job struct {
	key   [32]byte
	reply chan [32]byte
}

// startWorkload starts the upstream, the database stand-in, the workers,
// the janitor and the service.
func startWorkload(o Options) (*workload, error) {
	w := &workload{opts: o, cache: map[uint64]int64{}, jobs: make(chan job), pool: make(chan *dbConn, o.DBConns)}
	up, err := serveHTTP(http.HandlerFunc(upstream))
	if err != nil {
		return nil, err
	}
	w.stop = append(w.stop, up.stop)
	w.upURL = up.url
	w.up = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Clients}}
	w.stop = append(w.stop, w.up.CloseIdleConnections)
	db, err := serveDB()
	if err != nil {
		w.close()
		return nil, err
	}
	w.stop = append(w.stop, func() { db.Close() })
	for range o.DBConns {
		c, err := net.Dial("tcp", db.Addr().String())
		if err != nil {
			w.close()
			return nil, fmt.Errorf("db: %w", err)
		}
		w.pool <- &dbConn{c: c, r: bufio.NewReader(c)}
		w.stop = append(w.stop, func() { c.Close() })
	}
	done := make(chan struct{})
	w.stop = append(w.stop, func() { close(done) })
	for range o.Workers {
		go w.worker(done)
	}
	go w.janitor(done)
	svc, err := serveHTTP(w)
	if err != nil {
		w.close()
		return nil, err
	}
	w.stop = append(w.stop, svc.stop)
	w.svcURL = svc.url
	return w, nil
}

func (w *workload) close() {
	for i := len(w.stop) - 1; i >= 0; i-- {
		w.stop[i]()
	}
}

// drive runs c closed-model clients until ctx is done.
func (w *workload) drive(ctx context.Context, c int) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	defer client.CloseIdleConnections()
	routes := []string{"item", "item", "item", "item", "item", "search", "search", "search", "write", "write"}
	g, ctx := errgroup.WithContext(ctx)
	for i := range c {
		g.Go(func() error {
			for n := i; ctx.Err() == nil; n++ {
				if err := get(ctx, client, w.svcURL+routes[n%len(routes)]); err != nil && ctx.Err() == nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return err
}

// ServeHTTP is the service's handler: one task named "request" per request.
func (w *workload) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "request")
	defer task.End()
	route := r.URL.Path[1:]
	trace.Log(ctx, "route", route)
	body, err := w.serve(ctx, w.seq.Add(1), route)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.Write(body)
	w.requests.Add(1)
}

func region(ctx context.Context, name string, f func() error) error {
	var err error
	trace.WithRegion(ctx, name, func() { err = f() })
	return err
}

// serve is one request: decode, authorize under a shared mutex, then a
// route-specific mix of upstream HTTP calls and database queries (serial or
// overlapped), a fan-out, a handoff to the workers, and rendering.
func (w *workload) serve(ctx context.Context, id uint64, route string) ([]byte, error) {
	var key [32]byte
	region(ctx, "decode", func() error { key = decode(id); return nil })
	region(ctx, "auth", func() error { w.authorize(key); return nil })
	var err error
	switch route {
	case "item":
		if err = region(ctx, "upstream", func() error { return w.callUpstream(ctx) }); err == nil {
			err = region(ctx, "db", func() error { return w.queryDB(key) })
		}
	case "search":
		err = w.overlapped(ctx, key)
	case "write":
		err = region(ctx, "db", func() error {
			if err := w.queryDB(key); err != nil {
				return err
			}
			return w.queryDB(key)
		})
	default:
		return nil, fmt.Errorf("no route %q", route)
	}
	if err != nil {
		return nil, err
	}
	var parts [][32]byte
	region(ctx, "fanout", func() error { parts = w.fanout(ctx, key); return nil })
	region(ctx, "enrich", func() error { key = w.handoff(key); return nil })
	var body []byte
	region(ctx, "render", func() error { body, err = render(id, key, parts); return err })
	return body, err
}

// overlapped calls the upstream and the database at the same time.
//
//go:noinline
func (w *workload) overlapped(ctx context.Context, key [32]byte) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return region(gctx, "upstream", func() error { return w.callUpstream(gctx) }) })
	g.Go(func() error { return region(gctx, "db", func() error { return w.queryDB(key) }) })
	return g.Wait()
}

//go:noinline
func decode(id uint64) [32]byte {
	var b [32]byte
	for i := range 8 {
		b[i] = byte(id >> (8 * i))
	}
	return spin(b, 40)
}

// authorize consults the shared cache under authMu.
//
//go:noinline
func (w *workload) authorize(key [32]byte) {
	w.authMu.Lock()
	defer w.authMu.Unlock()
	k := uint64(key[0]) | uint64(key[1])<<8
	w.cache[k]++
	spin(key, 10)
}

//go:noinline
func (w *workload) callUpstream(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, "GET", w.upURL, nil)
	if err != nil {
		return err
	}
	resp, err := w.up.Do(req)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// queryDB takes a connection from the pool (waiting if all are busy) and
// does one round trip, so the request goroutine blocks in a network read.
//
//go:noinline
func (w *workload) queryDB(key [32]byte) error {
	c := <-w.pool
	defer func() { w.pool <- c }()
	if _, err := fmt.Fprintf(c.c, "Q %x\n", key[:4]); err != nil {
		return fmt.Errorf("db: %w", err)
	}
	if _, err := c.r.ReadString('\n'); err != nil {
		return fmt.Errorf("db: %w", err)
	}
	return nil
}

// fanout forks goroutines that each hash a part and send it back.
//
//go:noinline
func (w *workload) fanout(ctx context.Context, key [32]byte) [][32]byte {
	ch := make(chan [32]byte)
	for i := range w.opts.Fanout {
		go func() {
			k := key
			k[31] = byte(i)
			trace.WithRegion(ctx, "part", func() { k = spin(k, 20) })
			ch <- k
		}()
	}
	parts := make([][32]byte, 0, w.opts.Fanout)
	for range w.opts.Fanout {
		parts = append(parts, <-ch)
	}
	return parts
}

// handoff gives the key to a worker goroutine and waits for the answer.
//
//go:noinline
func (w *workload) handoff(key [32]byte) [32]byte {
	j := job{key: key, reply: make(chan [32]byte, 1)}
	w.jobs <- j
	return <-j.reply
}

func (w *workload) worker(done <-chan struct{}) {
	for {
		select {
		case j := <-w.jobs:
			j.reply <- spin(j.key, 30)
		case <-done:
			return
		}
	}
}

// janitor works outside any request and contends for authMu.
func (w *workload) janitor(done <-chan struct{}) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.authMu.Lock()
			if len(w.cache) > 4096 {
				clear(w.cache)
			}
			spin([32]byte{}, 20)
			w.authMu.Unlock()
		case <-done:
			return
		}
	}
}

type page struct {
	ID    uint64   `json:"id"`
	Key   string   `json:"key"`
	Parts []string `json:"parts"`
}

//go:noinline
func render(id uint64, key [32]byte, parts [][32]byte) ([]byte, error) {
	p := page{ID: id, Key: fmt.Sprintf("%x", key)}
	for _, k := range parts {
		p.Parts = append(p.Parts, fmt.Sprintf("%x", k[:8]))
	}
	return json.Marshal(p)
}

// spin does n SHA-256 rounds (about 0.2 µs each).
//
//go:noinline
func spin(b [32]byte, n int) [32]byte {
	for range n {
		b = sha256.Sum256(b[:])
	}
	return b
}

// upstream is the upstream service: a short random wait, then a body.
func upstream(rw http.ResponseWriter, r *http.Request) {
	time.Sleep(time.Duration(50+rand.IntN(350)) * time.Microsecond)
	rw.Header().Set("Content-Type", "application/json")
	io.WriteString(rw, `{"status":"ok","items":[1,2,3,4,5,6,7,8],"note":"upstream says hello"}`)
}

type httpServer struct {
	url  string
	stop func()
}

func serveHTTP(h http.Handler) (*httpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return &httpServer{url: "http://" + ln.Addr().String() + "/", stop: func() { srv.Close() }}, nil
}

// serveDB is the database stand-in: it answers each line after a short
// random wait, on persistent connections.
func serveDB() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go answer(c)
		}
	}()
	return ln, nil
}

func answer(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // the service closed the connection
		}
		time.Sleep(time.Duration(80+rand.IntN(200)) * time.Microsecond)
		if _, err := fmt.Fprintf(c, "ok %d\n", len(line)); err != nil {
			return
		}
	}
}
