package dbwait

import (
	"io"

	"github.com/latscope/latscope/pglog"
	"github.com/latscope/latscope/tracein"
)

// FeedTrace passes every record of r to a. Errors name the input and offset
// (tracein's).
func FeedTrace(a *Analyzer, r *tracein.Reader) error {
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		a.TraceEvent(ev)
	}
}

// FeedPGLog passes every statement of a PostgreSQL jsonlog to a.
func FeedPGLog(a *Analyzer, r *pglog.Reader) error {
	return pglog.Statements(r, a.Statement)
}
