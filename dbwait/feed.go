package dbwait

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/latscope/latscope/pglog"
)

// FeedPGLog passes every statement of a PostgreSQL jsonlog to a. It also
// counts the entries, and those whose "duration: " message did not parse,
// so that Finalize can say what the log held when nothing matched.
func FeedPGLog(a *Analyzer, r *pglog.Reader) error {
	agg := pglog.NewAggregator(a.Statement)
	for {
		e, err := r.Next()
		if err == io.EOF {
			agg.Flush()
			return nil
		}
		if err != nil {
			agg.Flush()
			return err
		}
		a.logEntry(e)
		agg.Add(e)
	}
}

// logEntry counts a PostgreSQL log entry.
func (a *Analyzer) logEntry(e pglog.Entry) {
	a.logLines++
	if strings.HasPrefix(e.Message, "duration: ") && !e.HasDuration {
		if a.badDuration == 0 {
			a.badDurationMsg = shorten(e.Message, 60)
		}
		a.badDuration++
	}
}

// shorten cuts s to at most n bytes (at a rune boundary), marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
