package agent

import (
	"context"
	"database/sql/driver"
	"errors"
)

// stmt wraps a prepared statement so that its executions under a request
// are timed for the metrics (Options.Metrics) like QueryContext and
// ExecContext; it adds no region and no comment (one statement serves many
// requests). Its optional interfaces answer as database/sql does for a
// statement without them, so wrapping changes no argument conversion:
// NamedValueChecker falls back to the connection's checker and then
// driver.ErrSkip, and the execution methods fall back to Exec and Query.
type stmt struct {
	s driver.Stmt
	c driver.Conn // the driver's connection, for its NamedValueChecker
}

// stmtCC is a stmt whose driver statement is a driver.ColumnConverter.
type stmtCC struct{ stmt }

var (
	_ driver.StmtExecContext   = (*stmt)(nil)
	_ driver.StmtQueryContext  = (*stmt)(nil)
	_ driver.NamedValueChecker = (*stmt)(nil)
	_ driver.ColumnConverter   = (*stmtCC)(nil) //nolint:staticcheck // the driver's own, kept
)

// wrapStmt wraps s, prepared on the driver's connection c.
func wrapStmt(s driver.Stmt, c driver.Conn) driver.Stmt {
	if _, ok := s.(driver.ColumnConverter); ok { //nolint:staticcheck // kept as the driver has it
		return &stmtCC{stmt{s: s, c: c}}
	}
	return &stmt{s: s, c: c}
}

// Close implements driver.Stmt.
func (s *stmt) Close() error { return s.s.Close() }

// NumInput implements driver.Stmt.
func (s *stmt) NumInput() int { return s.s.NumInput() }

// Exec implements driver.Stmt.
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.s.Exec(args) //nolint:staticcheck // the interface's own method
}

// Query implements driver.Stmt.
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.s.Query(args) //nolint:staticcheck // the interface's own method
}

// ExecContext implements driver.StmtExecContext.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	ri, start := dbStart(ctx)
	var res driver.Result
	var err error
	if se, ok := s.s.(driver.StmtExecContext); ok {
		res, err = se.ExecContext(ctx, args)
	} else {
		var vs []driver.Value
		if vs, err = namedValues(ctx, args); err == nil {
			res, err = s.s.Exec(vs) //nolint:staticcheck // database/sql's own fallback
		}
	}
	dbEnd(ri, start, err)
	return res, err
}

// QueryContext implements driver.StmtQueryContext.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	ri, start := dbStart(ctx)
	var rows driver.Rows
	var err error
	if sq, ok := s.s.(driver.StmtQueryContext); ok {
		rows, err = sq.QueryContext(ctx, args)
	} else {
		var vs []driver.Value
		if vs, err = namedValues(ctx, args); err == nil {
			rows, err = s.s.Query(vs) //nolint:staticcheck // database/sql's own fallback
		}
	}
	dbEnd(ri, start, err)
	return rows, err
}

// CheckNamedValue implements driver.NamedValueChecker.
func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := s.s.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	if n, ok := s.c.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// ColumnConverter implements driver.ColumnConverter.
func (s *stmtCC) ColumnConverter(idx int) driver.ValueConverter {
	return s.s.(driver.ColumnConverter).ColumnConverter(idx) //nolint:staticcheck // the driver's own
}

// errNamedArgs is database/sql's refusal of named arguments for a driver
// that takes positional ones only.
var errNamedArgs = errors.New("agent: the wrapped driver does not support the use of Named Parameters")

// namedValues is database/sql's conversion of arguments for a statement
// without the context methods, checking ctx first as it does.
func namedValues(ctx context.Context, named []driver.NamedValue) ([]driver.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vs := make([]driver.Value, len(named))
	for i, nv := range named {
		if nv.Name != "" {
			return nil, errNamedArgs
		}
		vs[i] = nv.Value
	}
	return vs, nil
}
