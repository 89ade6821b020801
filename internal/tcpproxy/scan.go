package tcpproxy

import (
	"bytes"

	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/tracelog"
)

// MaxSplitComment is the longest SQL comment whose traceparent is still
// found when the comment is split across two chunks of the client's
// stream: the tail of a chunk that opens a comment and does not close it is
// kept, up to this many bytes, and read with the next chunk. A longer
// comment, or one spread over three chunks, is missed when split (the
// agent's comment is about 70 bytes).
const MaxSplitComment = 512

var (
	tpKey        = []byte("traceparent")
	commentOpen  = []byte("/*")
	commentClose = []byte("*/")
)

// tpScanner finds the traceparents a client writes in SQL comments
// (pglog.FindTraceParent reads each comment), chunk by chunk.
type tpScanner struct {
	carry []byte // an unclosed comment at the end of the last chunk, from its "/*"
}

// scan returns the last traceparent in b, counting one in a comment that
// the previous chunk opened. A chunk without the key costs one bytes.Index
// over it and a look for "/*" in its last MaxSplitComment bytes.
//
// Without the comment open, a traceparent is not a statement's: in
// "WHERE traceparent='…'" it is a value. A chunk may carry several
// statements (a pipeline or batch): only the last one's traceparent is
// kept, so replies to the earlier ones are logged with it.
func (s *tpScanner) scan(b []byte) (tracelog.TraceParent, bool) {
	var last tracelog.TraceParent
	found := false
	if len(s.carry) > 0 {
		head := b[:min(len(b), MaxSplitComment)]
		if end := bytes.Index(head, commentClose); end >= 0 {
			head = head[:end+len(commentClose)]
		}
		joined := append(s.carry, head...)
		if bytes.Contains(joined, tpKey) {
			last, found = pglog.FindTraceParent(string(joined))
		}
		s.carry = joined[:0]
	}
	if bytes.Index(b, tpKey) >= 0 {
		if tp, ok := lastInComments(b); ok {
			last, found = tp, true
		}
	}
	tail := b[max(0, len(b)-MaxSplitComment):]
	if i := lastOpen(tail); i >= 0 && !bytes.Contains(tail[i+len(commentOpen):], commentClose) {
		s.carry = append(s.carry[:0], tail[i:]...)
	} else if len(b) > 0 && b[len(b)-1] == '/' {
		s.carry = append(s.carry[:0], '/') // perhaps the "/*" itself is split
	}
	return last, found
}

// lastInComments returns the traceparent of the last comment in b that
// carries one; a comment b does not close still counts.
func lastInComments(b []byte) (tracelog.TraceParent, bool) {
	var last tracelog.TraceParent
	found := false
	for rest := b; ; {
		i := bytes.Index(rest, commentOpen)
		if i < 0 {
			return last, found
		}
		c := rest[i:]
		end := bytes.Index(c[len(commentOpen):], commentClose)
		if end >= 0 {
			c = c[:len(commentOpen)+end+len(commentClose)]
		}
		if bytes.Contains(c, tpKey) {
			if tp, ok := pglog.FindTraceParent(string(c)); ok {
				last, found = tp, true
			}
		}
		if end < 0 {
			return last, found
		}
		rest = rest[i+len(c):]
	}
}

// lastOpen is bytes.LastIndex(b, "/*"), with a forward (vectorised)
// bytes.Index first: most chunks have no comment, and the backward search
// goes a byte at a time.
func lastOpen(b []byte) int {
	i := bytes.Index(b, commentOpen)
	if i < 0 {
		return -1
	}
	return i + bytes.LastIndex(b[i:], commentOpen)
}
