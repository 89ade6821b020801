package agent

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"runtime/trace"
	"time"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// WrapConnector returns a database/sql connector whose connections run each
// QueryContext and ExecContext in a region named tracelog.SQLRegion and prepend a
// sqlcommenter comment with a traceparent (logged in the region under
// tracelog.SQL):
//
//	db := sql.OpenDB(agent.WrapConnector(stdlib.GetConnector(*cfg)))
//
// Regions end when the driver returns, on the calling goroutine; reading
// rows afterwards is outside them. Prepared statements (db.Prepare, and
// database/sql's fallback when a driver skips QueryContext) get no region
// and no comment: one statement serves many requests, so no per-request
// comment fits it. With Options.Metrics, each QueryContext and ExecContext
// under a Handler's request, and each execution of a prepared statement
// there, is timed from the call until the driver returns
// (latscope_db_call_duration_seconds, docs/metrics.md). With pgx, set cfg.DefaultQueryExecMode to
// pgx.QueryExecModeExec: commented statements are all unique and would
// churn pgx's statement cache.
func WrapConnector(c driver.Connector) driver.Connector { return &connector{c: c} }

// WrapDriver returns d wrapped like WrapConnector, for sql.Register.
func WrapDriver(d driver.Driver) driver.Driver { return &sqlDriver{d: d} }

type sqlDriver struct{ d driver.Driver }

// Open implements driver.Driver.
func (d *sqlDriver) Open(name string) (driver.Conn, error) {
	c, err := d.d.Open(name)
	if err != nil {
		return nil, err
	}
	return &conn{c: c}, nil
}

// OpenConnector implements driver.DriverContext.
func (d *sqlDriver) OpenConnector(name string) (driver.Connector, error) {
	if dc, ok := d.d.(driver.DriverContext); ok {
		c, err := dc.OpenConnector(name)
		if err != nil {
			return nil, err
		}
		return &connector{c: c}, nil
	}
	return &connector{c: dsnConnector{name: name, d: d.d}}, nil
}

// dsnConnector is database/sql's fallback connector for a plain Driver.
type dsnConnector struct {
	name string
	d    driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.name) }
func (c dsnConnector) Driver() driver.Driver                        { return c.d }

type connector struct{ c driver.Connector }

// Connect implements driver.Connector.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{c: cn}, nil
}

// Driver implements driver.Connector.
func (c *connector) Driver() driver.Driver { return &sqlDriver{d: c.c.Driver()} }

// Close closes the wrapped connector if it can be closed (sql.DB.Close
// calls it).
func (c *connector) Close() error {
	if cl, ok := c.c.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// conn wraps a driver connection. Optional interfaces the wrapped one lacks
// answer as database/sql does without them (driver.ErrSkip, nil, true).
type conn struct{ c driver.Conn }

var (
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

// Unwrap returns the driver's own connection (for sql.Conn.Raw users).
func (c *conn) Unwrap() driver.Conn { return c.c }

// QueryContext implements driver.QueryerContext.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.c.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	defer trace.StartRegion(ctx, tracelog.SQLRegion).End()
	ri, start := dbStart(ctx)
	rows, err := q.QueryContext(ctx, Comment(ctx, query), args)
	dbEnd(ri, start, err)
	return rows, err
}

// ExecContext implements driver.ExecerContext.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.c.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	defer trace.StartRegion(ctx, tracelog.SQLRegion).End()
	ri, start := dbStart(ctx)
	res, err := e.ExecContext(ctx, Comment(ctx, query), args)
	dbEnd(ri, start, err)
	return res, err
}

// dbStart returns the request of ctx and the time, when its DB calls are
// timed for the metrics (Options.Metrics); else nil.
func dbStart(ctx context.Context) (*span.Info, time.Time) {
	if ri := span.Of(ctx); ri.Metered() {
		return ri, time.Now()
	}
	return nil, time.Time{}
}

// dbEnd adds the call begun at start to ri (nil: not timed). A call the
// driver skipped (driver.ErrSkip: database/sql retries it another way)
// made no round trip and is not counted.
func dbEnd(ri *span.Info, start time.Time, err error) {
	if ri != nil && !errors.Is(err, driver.ErrSkip) {
		ri.AddDB(time.Since(start))
	}
}

// Prepare implements driver.Conn.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	s, err := c.c.Prepare(query)
	if err != nil {
		return nil, err
	}
	return wrapStmt(s, c.c), nil
}

// PrepareContext implements driver.ConnPrepareContext.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	p, ok := c.c.(driver.ConnPrepareContext)
	if !ok {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return c.Prepare(query)
	}
	s, err := p.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return wrapStmt(s, c.c), nil
}

// Close implements driver.Conn.
func (c *conn) Close() error { return c.c.Close() }

// Begin implements driver.Conn.
func (c *conn) Begin() (driver.Tx, error) {
	return c.c.Begin() //nolint:staticcheck // the interface's own method
}

// BeginTx implements driver.ConnBeginTx.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.c.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	if opts.Isolation != 0 || opts.ReadOnly {
		return nil, errors.New("agent: the wrapped driver supports neither isolation levels nor read-only transactions")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.c.Begin() //nolint:staticcheck // database/sql's own fallback
}

// Ping implements driver.Pinger.
func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.c.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// ResetSession implements driver.SessionResetter.
func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.c.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid implements driver.Validator.
func (c *conn) IsValid() bool {
	if v, ok := c.c.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue implements driver.NamedValueChecker.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := c.c.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}
