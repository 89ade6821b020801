package dbwait

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/latscope/latscope/internal/pglog"
)

// DefaultMaxRecordBytes bounds one line or record of a statement log (a
// CSV record, a slow-log entry): a longer one is passed over or refused
// (ReadOptions.Skip), in memory bounded by the limit.
const DefaultMaxRecordBytes = 16 << 20

// ReadOptions bound and stop the statement-log readers (ReadMySQLCSVOptions,
// ReadMySQLSlowLogOptions).
type ReadOptions struct {
	// Context, when set, stops a read once done: every read of the
	// underlying reader checks it first, and the reader then returns an
	// error wrapping its Err. A read that blocks is for the caller to
	// unblock (a deadline, Close).
	Context context.Context
	// MaxRecordBytes bounds a line or record; 0: DefaultMaxRecordBytes.
	MaxRecordBytes int
	// Skip, when set, is called with the byte offset of each line or
	// record over MaxRecordBytes, which is then passed over; when nil, such
	// a record ends the read with an error naming its line and offset.
	Skip func(offset int64)
}

// withDefaults fills the zero fields and wraps r to check the context.
func (o ReadOptions) withDefaults(r io.Reader) (ReadOptions, io.Reader) {
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.Context != nil {
		r = ctxReader{o.Context, r}
	}
	return o, r
}

// ctxReader is r, until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// skips counts the lines or records a reader passed over.
type skips struct {
	n     int
	first int64
}

func (s *skips) add(offset int64) {
	if s.n == 0 {
		s.first = offset
	}
	s.n++
}

// note keeps, for Finalize's warnings, how many of name's lines or records
// (what: one, many) were over max bytes and skipped, and adds that to err,
// the reader's error, if any (what was skipped may be why it failed).
func (a *Analyzer) note(name string, what [2]string, max int, s skips, err error) error {
	if s.n == 0 {
		return err
	}
	n := fmt.Errorf("%s: %d %s over %s skipped (first at byte offset %d): their statements cannot be joined",
		name, s.n, what[min(s.n-1, 1)], sizeText(max), s.first)
	a.read = append(a.read, n)
	if err != nil {
		return fmt.Errorf("%w; also skipped: %d %s over %s (first at byte offset %d)", err, s.n, what[min(s.n-1, 1)], sizeText(max), s.first)
	}
	return nil
}

// sizeText is a limit in MiB when it is whole ones, else in bytes.
func sizeText(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// FeedPGLog passes every statement of a PostgreSQL jsonlog to a. It also
// counts the entries, and those whose "duration: " message did not parse,
// so that Finalize can say what the log held when nothing matched. A line
// over the reader's MaxLineBytes is skipped and counted (a warning of
// Finalize); any other malformed line ends the read with its error.
func FeedPGLog(a *Analyzer, r *pglog.Reader) error {
	return a.feedPGLog("PostgreSQL log", r)
}

// ReadPGLog is FeedPGLog of the jsonlog in r, stopped when ctx is done;
// name is for the warnings (errors are the reader's: the caller names the
// file).
func (a *Analyzer) ReadPGLog(ctx context.Context, name string, r io.Reader) error {
	return a.feedPGLog(name, pglog.NewReaderOptions(r, pglog.Options{Context: ctx}))
}

func (a *Analyzer) feedPGLog(name string, r *pglog.Reader) (err error) {
	agg := pglog.NewAggregator(a.Statement)
	var sk skips
	defer func() { err = a.note(name, [2]string{"line", "lines"}, r.MaxLineBytes(), sk, err) }()
	for {
		e, err := r.Next()
		var lerr *pglog.LineError
		switch {
		case err == io.EOF:
			agg.Flush()
			return nil
		case errors.Is(err, pglog.ErrLineTooLong) && errors.As(err, &lerr):
			sk.add(lerr.Offset)
			continue
		case err != nil:
			agg.Flush()
			return err
		}
		a.logEntry(e)
		agg.Add(e)
	}
}

// ReadMySQLCSV is ReadMySQLCSVOptions into a, stopped when ctx is done;
// records over DefaultMaxRecordBytes are skipped and counted (a warning
// of Finalize). Call it once per export: a row that an earlier export
// read into a held too (the same traceparent, THREAD_ID, TIMER_WAIT and
// EVENT_ID) is left out, so exports that overlap count and join each
// statement once.
func (a *Analyzer) ReadMySQLCSV(ctx context.Context, name string, r io.Reader) error {
	var sk skips
	opts := ReadOptions{Context: ctx, Skip: sk.add}
	err := readMySQLCSV(name, r, func(s pglog.Statement, event uint64) {
		if a.history.add(s, event) {
			a.Statement(s)
		}
	}, opts)
	return a.note(name, [2]string{"record", "records"}, DefaultMaxRecordBytes, sk, err)
}

// ReadMySQLSlowLog is ReadMySQLSlowLogOptions into a, stopped when ctx is
// done; entries over DefaultMaxRecordBytes are skipped and counted (a
// warning of Finalize).
func (a *Analyzer) ReadMySQLSlowLog(ctx context.Context, name string, r io.Reader) error {
	var sk skips
	opts := ReadOptions{Context: ctx, Skip: sk.add}
	err := ReadMySQLSlowLogOptions(name, r, a.Statement, opts)
	return a.note(name, [2]string{"entry", "entries"}, DefaultMaxRecordBytes, sk, err)
}
