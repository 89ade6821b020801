package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/termsafe"
)

// DebugEnv is the environment variable that has the effect of --debug.
const DebugEnv = "LATSCOPE_DEBUG"

// detailer is an error that knows more than its one line: where in a trace
// it happened, what was read around it. --debug prints the details.
type detailer interface{ Details() string }

// globalFlags strips the flags that come before the command (--debug) from
// args. debug is also set by LATSCOPE_DEBUG=1 (or any value but "" and "0").
func globalFlags(args []string) (debug bool, rest []string) {
	if v := os.Getenv(DebugEnv); v != "" && v != "0" {
		debug = true
	}
	for len(args) > 0 && (args[0] == "--debug" || args[0] == "-debug") {
		debug = true
		args = args[1:]
	}
	return debug, args
}

// PrintError prints err as the program's error message: exactly one line
// starting with Name and ": " unless debug is set. An error whose text runs over
// several lines is cut to its first, with a pointer to --debug. With debug,
// the whole text follows and then the Details of every error in the chain
// that has them.
func PrintError(w io.Writer, err error, debug bool) {
	msg := err.Error()
	first, _, multi := strings.Cut(msg, "\n")
	first = termsafe.String(strings.TrimRight(first, " \r\t:"))
	ds := details(err)
	switch {
	case !debug && (multi || len(ds) > 0):
		fmt.Fprintf(w, "%s: %s (--debug for details)\n", Name, first)
		return
	case !debug:
		fmt.Fprintf(w, "%s: %s\n", Name, first)
		return
	}
	fmt.Fprintf(w, "%s: %s\n", Name, safeLines(strings.TrimRight(msg, "\n")))
	for _, d := range ds {
		fmt.Fprintf(w, "\ndetails:\n%s\n", safeLines(strings.TrimRight(d, "\n")))
	}
}

// safeLines escapes the control characters of each line of s, keeping the
// line breaks: --debug's details are several lines by design.
func safeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = termsafe.String(l)
	}
	return strings.Join(lines, "\n")
}

// details returns the distinct non-empty Details of the errors in err's
// tree (errors.Unwrap and Unwrap() []error), outermost first.
func details(err error) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(error)
	walk = func(e error) {
		for e != nil {
			if d, ok := e.(detailer); ok {
				if s := strings.TrimSpace(d.Details()); s != "" && !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
			if m, ok := e.(interface{ Unwrap() []error }); ok {
				for _, x := range m.Unwrap() {
					walk(x)
				}
				return
			}
			e = errors.Unwrap(e)
		}
	}
	walk(err)
	return out
}

// commandError is an error of one command: its text starts with the
// command's name, added once by run whatever the command returned.
type commandError struct {
	cmd string
	err error
}

func (e *commandError) Error() string {
	msg := opterr.Flagged(e.err.Error(), e.err, optionFlag)
	if e.cmd == "" { // the Default command: the program's name says it
		return msg
	}
	// Commands that still prefix their own errors (load, lab, proxy, and
	// the capture package) keep working: their prefix is not doubled.
	if strings.HasPrefix(msg, e.cmd+": ") {
		return msg
	}
	return e.cmd + ": " + msg
}

func (e *commandError) Unwrap() error { return e.err }

// optionFlag is the flag that sets a library option named in an
// opterr.Error: every command spells an option as the flag of the same
// name ("task" is --task, "pg-clock-offset" --pg-clock-offset).
func optionFlag(option string) string {
	if option == "requests" {
		return "--requests N (or --requests-from results.jsonl)"
	}
	return "--" + option
}

// inCommand wraps err (when not nil and not already wrapped) as an error of
// command cmd ("" for Default).
func inCommand(cmd string, err error) error {
	var ce *commandError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	return &commandError{cmd: cmd, err: err}
}
