// Package opterr marks an error as being about one option of a library
// call, so that libraries never name a command-line flag and the command
// line names its own flag for the option.
//
// A library returns opterr.Wrap("task", err): its text reads
// `task "x" matches nothing`, and latscope's CLI, which knows the option
// as --task, prints `--task "x" matches nothing` (Flagged).
package opterr

import (
	"errors"
	"strings"
)

// Error is an error about the option Option (lower-case, as the library's
// Options field would be spoken: "task", "frame", "html", "pprof").
type Error struct {
	Option string
	Err    error
}

// Error returns the option's name followed by what is wrong with it.
func (e *Error) Error() string { return e.Option + " " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns err as an error about option, or nil when err is nil.
func Wrap(option string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Option: option, Err: err}
}

// Flagged returns msg, the text of err (or of an error wrapping it), with
// the first option error in err's chain spoken as the flag flag(option)
// instead of the option's name. When err holds no option error, or flag
// has no name for it (""), msg is returned unchanged.
func Flagged(msg string, err error, flag func(option string) string) string {
	var oe *Error
	if !errors.As(err, &oe) {
		return msg
	}
	name := flag(oe.Option)
	if name == "" {
		return msg
	}
	return strings.Replace(msg, oe.Error(), name+" "+oe.Err.Error(), 1)
}
