package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand: a name, a one-line summary for the usage text,
// and a function that parses its own flags from args.
type command struct {
	summary string
	run     func(ctx context.Context, stdout, stderr io.Writer, args []string) error
}

// commands is the command table. Each entry lives in its own file.
var commands = map[string]command{}

// register adds a command to the table; files call it from init.
func register(name, summary string, run func(ctx context.Context, stdout, stderr io.Writer, args []string) error) {
	commands[name] = command{summary: summary, run: run}
}

// mainExit runs latscope with args and returns the process exit status:
// 0 on success, 2 on any error, printed as one line (with --debug or
// LATSCOPE_DEBUG=1, followed by the error's details).
func mainExit(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	debug, _ := globalFlags(args)
	if err := run(ctx, os.Stdout, os.Stderr, args); err != nil {
		printError(os.Stderr, err, debug)
		return 2
	}
	return 0
}

// run dispatches args to a subcommand. It never exits the process. Errors
// of a command are *commandError, whose text starts with the command name.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	_, args = globalFlags(args)
	if len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" && args[0] != "-help" {
		return fmt.Errorf("unknown global flag %s (global flags: --debug; a command's flags go after it)", args[0])
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			if _, ok := commands[args[1]]; !ok {
				return fmt.Errorf("help: unknown command %q (commands: %s)", args[1], strings.Join(commandNames(), ", "))
			}
			help := []string{args[1], "-h"}
			if len(args) > 2 && args[1] == "lab" && labSub[args[2]] != nil {
				help = []string{"lab", args[2], "-h"} // "help lab serve" is "lab serve -h"
			}
			return run(ctx, stdout, stderr, help)
		}
		usage(stdout)
		if len(args) == 0 {
			return errors.New("no command given (see the list above)")
		}
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q (commands: %s)", args[0], strings.Join(commandNames(), ", "))
	}
	err := c.run(ctx, stdout, stderr, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, lastFlags)
		return nil
	}
	return inCommand(args[0], err)
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: latscope [--debug] <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'latscope <command> -h' (or 'latscope help <command>') for a command's flags.")
	fmt.Fprintln(w, "--debug (or LATSCOPE_DEBUG=1) prints an error's details after its one line.")
	fmt.Fprintln(w, usageExamples)
}

const usageExamples = `
examples:
  latscope lab                         run the seed experiment end to end (upstream, PostgreSQL, load)
  latscope demo-trace -o demo.trace    write a trace of a small demo service
  latscope analyze demo.trace          per-request latency budget from a Go execution trace
  latscope load -c 20 -d 30s URL       closed-model load against URL`

// flagHelp remembers, per command, what -h prints.
type flagHelp struct {
	fs       *flag.FlagSet
	synopsis string
	examples string
}

var helps = map[string]*flagHelp{}

// lastFlags is the name of the flag set created last: the one whose -h the
// dispatcher answers (a subcommand such as "lab serve" creates its own).
var lastFlags string

// newFlagSet returns a FlagSet that reports errors instead of exiting and
// printing: parse errors come back as one-line errors, and -h is answered
// by the dispatcher with the synopsis, the flags and the examples.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	helps[name] = &flagHelp{fs: fs, synopsis: synopsis}
	lastFlags = name
	return fs
}

// usageWith records the examples printed by -h for fs. It returns a no-op
// usage function, kept for symmetry with flag.FlagSet.Usage.
func usageWith(fs *flag.FlagSet, stderr io.Writer, synopsis, examples string) func() {
	if h := helps[fs.Name()]; h != nil {
		h.synopsis, h.examples = synopsis, examples
	}
	return func() {}
}

// printHelp prints a command's usage.
func printHelp(w io.Writer, name string) {
	h := helps[name]
	if h == nil {
		return
	}
	summary := commands[name].summary
	if summary == "" {
		summary = "(run by latscope lab as a process of its own)"
	}
	fmt.Fprintf(w, "usage: latscope %s\n\n%s\n\nflags:\n", h.synopsis, summary)
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
	h.fs.SetOutput(io.Discard)
	fmt.Fprint(w, h.examples)
}
