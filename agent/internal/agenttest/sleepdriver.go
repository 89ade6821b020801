package agenttest

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"time"
)

// SleepConnector is a database/sql driver whose statements take the time
// they name: "sleep 20ms" sleeps 20 ms (any other text returns at once).
// It stands in for a database whose call time the test knows exactly.
type SleepConnector struct{}

// Connect implements driver.Connector.
func (SleepConnector) Connect(context.Context) (driver.Conn, error) { return sleepConn{}, nil }

// Driver implements driver.Connector.
func (SleepConnector) Driver() driver.Driver { return SleepDriver{} }

// SleepDriver is SleepConnector's driver.
type SleepDriver struct{}

// Open implements driver.Driver.
func (SleepDriver) Open(string) (driver.Conn, error) { return sleepConn{}, nil }

type sleepConn struct{}

var (
	_ driver.QueryerContext = sleepConn{}
	_ driver.ExecerContext  = sleepConn{}
)

func (sleepConn) Prepare(query string) (driver.Stmt, error) { return sleepStmt(query), nil }
func (sleepConn) Close() error                              { return nil }
func (sleepConn) Begin() (driver.Tx, error)                 { return nil, fmt.Errorf("sleep driver: no transactions") }

// QueryContext implements driver.QueryerContext. With arguments it skips,
// as go-sql-driver/mysql does without interpolateParams: database/sql then
// prepares the statement and runs it.
func (sleepConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) > 0 {
		return nil, driver.ErrSkip
	}
	return sleepRows{}, sleepFor(ctx, query)
}

// ExecContext implements driver.ExecerContext.
func (sleepConn) ExecContext(ctx context.Context, query string, _ []driver.NamedValue) (driver.Result, error) {
	return driver.RowsAffected(0), sleepFor(ctx, query)
}

// sleepFor sleeps the duration after "sleep " in query (after the agent's
// comment), if any.
func sleepFor(ctx context.Context, query string) error {
	_, arg, ok := strings.Cut(query, "sleep ")
	if !ok {
		return nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(arg))
	if err != nil {
		return fmt.Errorf("sleep driver: %w", err)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sleepRows is an empty result.
type sleepRows struct{}

func (sleepRows) Columns() []string         { return []string{"x"} }
func (sleepRows) Close() error              { return nil }
func (sleepRows) Next([]driver.Value) error { return io.EOF }

// sleepStmt is a prepared statement of the sleep driver, with only the
// methods every driver has (no context ones) and a column converter.
type sleepStmt string

var _ driver.ColumnConverter = sleepStmt("") //nolint:staticcheck // testing the wrapper keeps it

func (sleepStmt) Close() error  { return nil }
func (sleepStmt) NumInput() int { return -1 }
func (s sleepStmt) Exec([]driver.Value) (driver.Result, error) {
	return driver.RowsAffected(0), sleepFor(context.Background(), string(s))
}
func (s sleepStmt) Query([]driver.Value) (driver.Rows, error) {
	return sleepRows{}, sleepFor(context.Background(), string(s))
}
func (sleepStmt) ColumnConverter(int) driver.ValueConverter { return driver.DefaultParameterConverter }
