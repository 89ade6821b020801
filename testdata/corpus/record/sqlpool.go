package main

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// sql-pool: a handler querying a database through database/sql with
// SetMaxOpenConns(2); the driver is a minimal one of the program's own,
// speaking a line protocol over loopback TCP to an in-process database
// that answers each query after 4 ms. 6 clients, so requests queue in
// database/sql's pool; its own DB.Stats() wait counters are the truth for
// the queue.

const queryCost = 4 * time.Millisecond

// ---- the database: one goroutine per connection ----

func serveDB() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					begin := time.Now()
					time.Sleep(queryCost)
					svc.since("query", begin)
					if _, err := io.WriteString(c, "42\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() { ln.Close() }, nil
}

// ---- the driver ----

type lineDriver struct{}

func (lineDriver) Open(addr string) (driver.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &lineConn{c: c, r: bufio.NewReader(c)}, nil
}

type lineConn struct {
	c net.Conn
	r *bufio.Reader
}

func (c *lineConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("not supported") }
func (c *lineConn) Close() error                        { return c.c.Close() }
func (c *lineConn) Begin() (driver.Tx, error)           { return nil, errors.New("not supported") }

func (c *lineConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	defer svc.since("conn.query", time.Now())
	if _, err := io.WriteString(c.c, strings.ReplaceAll(query, "\n", " ")+"\n"); err != nil {
		return nil, driver.ErrBadConn
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	return &lineRows{v: strings.TrimSpace(line)}, nil
}

type lineRows struct {
	v    string
	done bool
}

func (r *lineRows) Columns() []string { return []string{"v"} }
func (r *lineRows) Close() error      { return nil }
func (r *lineRows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	dest[0] = r.v
	return nil
}

func init() { sql.Register("corpusline", lineDriver{}) }

func queryStock(ctx context.Context, db *sql.DB) (string, error) {
	var v string
	err := db.QueryRowContext(ctx, "SELECT stock FROM items WHERE id = 1").Scan(&v)
	return v, err
}

func init() {
	register(&scenario{name: "sql-pool", clients: 6, warmup: 300 * time.Millisecond, window: 1000 * time.Millisecond,
		what: "net/http handler querying through database/sql (SetMaxOpenConns 2, a line-protocol driver over loopback TCP) a database answering in 4 ms; 6 clients",
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /stock"
			t.Terms = []TermTruth{
				{Frame: "main.(*lineConn).QueryContext", Kind: "network", ConfiguredMS: 4, Timer: "query", Critical: true, Note: "the database's 4 ms answer, read from the connection by the driver (the program's own code); measured_ms is the database side's timer"},
				{Frame: "main.queryStock", Kind: "select", Critical: true, Note: "database/sql's pool queue: measured_ms is the service's timer around QueryRowContext+Scan less its timer around the driver's QueryContext (per request, in the window); service.sql_wait_ms and sql_wait_count are DB.Stats() across the trace"},
			}
			addr, stopDB, err := serveDB()
			if err != nil {
				return nil, nil, err
			}
			db, err := sql.Open("corpusline", addr)
			if err != nil {
				return nil, nil, err
			}
			db.SetMaxOpenConns(2)
			db.SetMaxIdleConns(2)
			var st0, st1 sql.DBStats
			atStart = func() { st0 = db.Stats() }
			atStop = func() { st1 = db.Stats() }
			mux := http.NewServeMux()
			mux.HandleFunc("GET /stock", traced("GET /stock", func(w http.ResponseWriter, r *http.Request) {
				begin := time.Now()
				v, err := queryStock(r.Context(), db)
				svc.since("query+wait", begin)
				if err != nil {
					http.Error(w, err.Error(), 500)
					return
				}
				writeItem(w, "stock", v)
			}))
			url, stop, err := serve(mux)
			if err != nil {
				return nil, nil, err
			}
			post = func(t *Truth, from, to time.Time) {
				t.Service["sql_wait_count"] = float64(st1.WaitCount - st0.WaitCount)
				t.Service["sql_wait_ms"] = round3(float64(st1.WaitDuration-st0.WaitDuration) / 1e6)
				all, _ := meanIn(svc.get("query+wait"), from, to)
				conn, _ := meanIn(svc.get("conn.query"), from, to)
				t.Terms[1].MeasuredMS = round3(all - conn)
			}
			return get(url+"/stock", false), func() { stop(); db.Close(); stopDB() }, nil
		}})
}
