package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
)

// sql-pool-serial, sql-pool-overlap and sql-pool-4: before/after pairs for
// the prediction engine's pool path (issue #36 §3). The handler calls an
// upstream (a loopback HTTP service of the recorder's, 20 ms) then runs one
// query through database/sql with SetMaxOpenConns(2); 6 clients, so
// requests queue in database/sql's own pool. No database runs: the driver
// is a tiny one of the program's own whose query sleeps 4 ms on the
// connection it holds, so MaxOpenConns really queues and the hold is known.
// After: the upstream call and the query run concurrently (errgroup), the
// change `overlap=fetchRate,loadStock` predicts; or the pool has 4
// connections, the change `pool=4` predicts.

const (
	rateCost = 20 * time.Millisecond
	holdCost = 4 * time.Millisecond
)

// ---- the driver: a query is a sleep on the connection it holds ----

type sleepDriver struct{}

func (sleepDriver) Open(string) (driver.Conn, error) { return &sleepConn{}, nil }

type sleepConn struct{}

func (*sleepConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("not supported") }
func (*sleepConn) Close() error                        { return nil }
func (*sleepConn) Begin() (driver.Tx, error)           { return nil, errors.New("not supported") }

func (*sleepConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	begin := time.Now()
	time.Sleep(holdCost)
	svc.since("hold", begin)
	return &lineRows{v: "7"}, nil
}

func init() { sql.Register("corpussleep", sleepDriver{}) }

// rateClient keeps enough idle connections for every client, so the
// upstream call dials only during the warm-up, before and after the change.
var rateClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

func fetchRate(ctx context.Context, url string) error {
	begin := time.Now()
	defer svc.since("fetchRate", begin)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := rateClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("rate: %s", resp.Status)
	}
	return err
}

func loadStock(ctx context.Context, db *sql.DB) error {
	begin := time.Now()
	defer svc.since("loadStock", begin)
	var v string
	return db.QueryRowContext(ctx, "SELECT stock FROM items WHERE id = 1").Scan(&v)
}

func registerSQLPair(name string, overlap bool, conns int) {
	what := "net/http handler calling a 20 ms upstream then running one query through database/sql (SetMaxOpenConns 2; a driver of the program's own whose query sleeps 4 ms on the connection it holds); 6 clients"
	switch {
	case overlap:
		what = "sql-pool-serial with the upstream call and the query run concurrently (errgroup): the change `overlap=fetchRate,loadStock` predicts; 6 clients"
	case conns != 2:
		what = fmt.Sprintf("sql-pool-serial with SetMaxOpenConns(%d): the change `pool=%d` predicts; 6 clients", conns, conns)
	}
	register(&scenario{name: name, clients: 6, warmup: 400 * time.Millisecond, window: 1500 * time.Millisecond, what: what,
		start: func(t *Truth) (func(context.Context) error, func(), error) {
			t.Task = "GET /cart"
			t.Terms = []TermTruth{
				{Frame: "main.fetchRate", Kind: "select", ConfiguredMS: 20, Timer: "fetchRate", Critical: true, Beneath: "network",
					Note: "the upstream call: its 20 ms sleep, read by the transport's reader goroutine"},
				{Frame: "main.(*sleepConn).QueryContext", Kind: "sleep", ConfiguredMS: 4, Timer: "hold", Critical: !overlap,
					Note: "the query: 4 ms on the connection it holds (the driver's own sleep)"},
				{Frame: "main.loadStock", Kind: "select", Critical: !overlap,
					Note: "database/sql's pool queue ((*DB).conn): measured_ms is the service's timer around loadStock less its timer around the driver's query (per request, in the window); service.sql_wait_ms and sql_wait_count are DB.Stats() across the trace"},
			}
			if overlap {
				t.Terms[1].Note += "; overlapped, hidden behind the longer upstream call"
				t.Terms[2].Note += "; overlapped, hidden behind the longer upstream call"
			}
			rate := http.NewServeMux()
			rate.HandleFunc("GET /rate", func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(rateCost)
				writeItem(w, "r", 3)
			})
			rateURL, stopRate, err := serve(rate)
			if err != nil {
				return nil, nil, err
			}
			db, err := sql.Open("corpussleep", "")
			if err != nil {
				stopRate()
				return nil, nil, err
			}
			db.SetMaxOpenConns(conns)
			db.SetMaxIdleConns(conns)
			var st0, st1 sql.DBStats
			atStart = func() { st0 = db.Stats() }
			atStop = func() { st1 = db.Stats() }
			mux := http.NewServeMux()
			mux.HandleFunc("GET /cart", traced("GET /cart", func(w http.ResponseWriter, r *http.Request) {
				var err error
				if overlap {
					g, ctx := errgroup.WithContext(r.Context())
					g.Go(func() error { return fetchRate(ctx, rateURL+"/rate") })
					g.Go(func() error { return loadStock(ctx, db) })
					err = g.Wait()
				} else {
					err = fetchRate(r.Context(), rateURL+"/rate")
					if err == nil {
						err = loadStock(r.Context(), db)
					}
				}
				if err != nil {
					http.Error(w, err.Error(), 502)
					return
				}
				writeItem(w, "c", 1)
			}))
			url, stop, err := serve(mux)
			if err != nil {
				stopRate()
				db.Close()
				return nil, nil, err
			}
			post = func(t *Truth, from, to time.Time) {
				t.Service["sql_max_open_conns"] = float64(conns)
				t.Service["sql_wait_count"] = float64(st1.WaitCount - st0.WaitCount)
				t.Service["sql_wait_ms"] = round3(float64(st1.WaitDuration-st0.WaitDuration) / 1e6)
				all, n := meanIn(svc.get("loadStock"), from, to)
				hold, _ := meanIn(svc.get("hold"), from, to)
				t.Terms[2].MeasuredMS = round3(all - hold)
				if n > 0 {
					// DB.Stats' wait per query in the window, beside the timers'.
					t.Service["sql_wait_ms_per_query"] = round3(t.Service["sql_wait_ms"] / float64(n))
				}
			}
			return get(url+"/cart", false), func() { stop(); stopRate(); db.Close() }, nil
		}})
}

func init() {
	registerSQLPair("sql-pool-serial", false, 2)
	registerSQLPair("sql-pool-overlap", true, 2)
	registerSQLPair("sql-pool-4", false, 4)
}
