package jfr

import (
	"context"
	"fmt"
	"os"
)

// ReaderEnv names the environment variable that chooses the event source:
// "binary" (or unset) reads the recording directly (ReadBinary); "print"
// runs the JDK's `jfr print --json` (Print), the reference the binary
// reader is tested against. docs/jfr-format.md says more.
const ReaderEnv = "LATSCOPE_JFR_READER"

// ReadEvents calls fn with each event of the recording at path whose type is
// in o.Events, in the recording's order (within a chunk, by end time, as
// `jfr print` orders them). It is the one place the analysis reads events
// from: ReadBinary, or Print when $LATSCOPE_JFR_READER is "print".
func ReadEvents(ctx context.Context, path string, o PrintOptions, fn func(*Event) error) error {
	switch v := os.Getenv(ReaderEnv); v {
	case "", "binary":
		return ReadBinary(ctx, path, o, fn)
	case "print":
		return Print(ctx, path, o, fn)
	default:
		return fmt.Errorf("$%s=%q: want binary or print", ReaderEnv, v)
	}
}
