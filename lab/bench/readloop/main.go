// Command readloop is the floor the analyser is measured against: a bare
// golang.org/x/exp/trace read loop that decodes every event of a trace and
// touches nothing, then prints how many events and bytes it read.
//
// Usage:
//
//	go run ./lab/bench/readloop lab/bench/out/trace-100MB.trace
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"golang.org/x/exp/trace"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "readloop:", err)
		os.Exit(2)
	}
}

func run(stdout io.Writer, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: readloop TRACE")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	// The same 1 MiB buffer tracein.NewReader puts in front of the file.
	r, err := trace.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	var n int64
	for {
		_, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: event %d: %w", args[0], n, err)
		}
		n++
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "readloop: %s: %d events, %d bytes\n", args[0], n, st.Size())
	return nil
}
