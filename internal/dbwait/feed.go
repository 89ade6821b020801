package dbwait

import (
	"strings"
	"unicode/utf8"

	"github.com/latscope/latscope/internal/pglog"
)

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
