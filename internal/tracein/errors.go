package tracein

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// Error is a failure to read a trace. Its Error is one line naming the
// input and, where known, the byte offset the reader had reached; the
// parser's full text (a state dump of dozens of lines, say, or the stack of
// a recovered panic) is behind Details.
//
// Callers print Error; a debugging mode (latscope --debug) finds the long
// text of any error in the chain with
//
//	var d interface{ Details() string }
//	if errors.As(err, &d) && d.Details() != "" { fmt.Println(d.Details()) }
type Error struct {
	Name   string // the input, usually the file name
	Offset int64  // bytes of input consumed when it failed; -1 if unknown
	Msg    string // what went wrong, one line
	Err    error  // the underlying error, if any (errors.Is/As see it)

	details string // the long text, if longer than Msg
}

// Error returns "name: offset N: what went wrong", on one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Name)
	b.WriteString(": ")
	if e.Offset >= 0 {
		b.WriteString("offset ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Details returns what the one line leaves out: the parser's full text,
// however many lines (with a recovered panic, its stack), or "" when the
// one line is all there is.
func (e *Error) Details() string { return e.details }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// newError builds an Error whose message is what, then the first line of
// cause (if any); the rest of cause goes to Details.
func newError(name string, offset int64, what string, cause error) *Error {
	e := &Error{Name: name, Offset: offset, Msg: what, Err: cause}
	if cause == nil {
		return e
	}
	first, rest := oneLine(cause.Error())
	if what == "" {
		e.Msg = first
	} else if first != "" {
		e.Msg = what + ": " + first
	}
	if rest != "" {
		e.details = cause.Error()
	}
	return e
}

// panicError turns a value recovered from the parser into an Error; the
// panic's stack is kept for Details.
func panicError(name string, offset int64, p any) *Error {
	first, _ := oneLine(fmt.Sprint(p))
	return &Error{Name: name, Offset: offset, Msg: "bad trace data (parser failed: " + first + ")",
		details: fmt.Sprintf("panic: %v\n\n%s", p, debug.Stack())}
}

// oneLine splits a message into its first line, without a trailing colon
// (a parser's "frontier:" introducing a dump), and the rest.
func oneLine(msg string) (first, rest string) {
	first, rest, _ = strings.Cut(strings.TrimLeft(msg, "\n"), "\n")
	first = strings.TrimRight(first, " \t\r:")
	first = strings.TrimSuffix(first, ": frontier")
	if strings.TrimSpace(rest) == "" {
		rest = ""
	}
	return first, rest
}

// readError describes an error from the input itself (not the trace data),
// or returns nil if err is none.
func readError(name string, offset int64, err error) *Error {
	if err == nil || err == io.EOF {
		return nil
	}
	if errors.Is(err, syscall.EISDIR) {
		return &Error{Name: name, Offset: -1, Msg: "is a directory, not a trace file", Err: err}
	}
	return newError(name, offset, "read error", err)
}
