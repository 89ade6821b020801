package dbwait_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/dbwait"
)

// TestNoMatchSaysWhatDidNotParse: when the log's durations do not parse,
// the error says so instead of blaming a missing traceparent comment
// ; a log without durations at all says how to get them.
func TestNoMatchSaysWhatDidNotParse(t *testing.T) {
	base := loadCapture(t, "baseline")
	ms := regexp.MustCompile(`^duration: ([0-9]+)\.([0-9]+) ms`)
	commas := editLog(t, base.pglog, func(m map[string]any) {
		if s, ok := m["message"].(string); ok {
			m["message"] = ms.ReplaceAllString(s, "duration: $1,$2 ms")
		}
	})
	noDurations := editLog(t, base.pglog, func(m map[string]any) {
		if s, ok := m["message"].(string); ok {
			m["message"] = ms.ReplaceAllString(s, "")
			m["message"] = strings.TrimLeft(m["message"].(string), " ")
			if strings.HasPrefix(m["message"].(string), "statement: ") {
				m["message"] = "connection authorized"
			}
		}
	})
	for _, c := range []struct {
		name string
		log  []byte
		want string
	}{
		{"decimal commas", commas, `have a duration that did not parse (first: "duration: `},
		{"no durations", noDurations, "set log_min_duration_statement = 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := finalize(t, base.trace, c.log, dbwait.Options{})
			if !errors.Is(err, dbwait.ErrNoMatch) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "no traceparent comment") {
				t.Errorf("err = %v, want ErrNoMatch saying %q", err, c.want)
			}
		})
	}
}
