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
	"strconv"
	"strings"
	"syscall"
)

// command is one subcommand: a name, a one-line summary for the usage text,
// and a function that parses its own flags from args.
type command struct {
	summary string
	run     func(ctx context.Context, stdout, stderr io.Writer, args []string) error
}

// commands is the command table. Each entry lives in its own file. A name
// with a space ("lab serve") is a lab subcommand: `latscope lab serve`.
var commands = map[string]command{}

// register adds a command to the table; every command's file calls it from
// init, top-level commands and lab subcommands alike.
func register(name, summary string, run func(ctx context.Context, stdout, stderr io.Writer, args []string) error) {
	if _, dup := commands[name]; dup {
		panic("latscope: command " + name + " registered twice")
	}
	commands[name] = command{summary: summary, run: run}
}

// labSubcommand returns the lab subcommand named sub.
func labSubcommand(sub string) (command, bool) {
	c, ok := commands["lab "+sub]
	return c, ok
}

// mainExit runs latscope with args and returns the process exit status:
// 0 when the command ran and all is well, 1 when it ran and a verdict or
// check it reports failed (a lab check, a missed prediction), 2 on any
// usage or input error. The error is printed as one line (with --debug or
// LATSCOPE_DEBUG=1, followed by its details).
func mainExit(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels the command, which stops within a second;
	// a second one ends the process, as a stuck command must be.
	go func() { <-ctx.Done(); stop() }()
	debug, _ := globalFlags(args)
	err := run(ctx, os.Stdout, os.Stderr, args)
	if err != nil {
		printError(os.Stderr, err, debug)
	}
	return exitStatus(err)
}

// exitStatus is the process exit status for a command's error.
func exitStatus(err error) int {
	switch _, verdict := errors.AsType[*failedVerdict](err); {
	case err == nil:
		return 0
	case verdict:
		return 1
	}
	return 2
}

// failedVerdict is the error of a command that ran to the end and whose
// verdict is a failure: a lab check not met, a prediction missed. Its exit
// status is 1, not the 2 of a usage or input error.
type failedVerdict struct{ msg string }

func (e *failedVerdict) Error() string { return e.msg }

// verdictFailed returns a failedVerdict with a formatted message.
func verdictFailed(format string, args ...any) error {
	return &failedVerdict{msg: fmt.Sprintf(format, args...)}
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
			if _, ok := labSubcommand(argAt(args, 2)); ok && args[1] == "lab" {
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
	var help *helpRequest
	if errors.As(err, &help) {
		help.print(stdout)
		return nil
	}
	return inCommand(args[0], err)
}

// argAt returns args[i], or "" past the end.
func argAt(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

// commandNames lists the top-level commands.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		if !strings.Contains(n, " ") {
			names = append(names, n)
		}
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

// flagSet is a command's flag set with what its -h prints beside the flags.
type flagSet struct {
	*flag.FlagSet
	synopsis, examples string
}

// newFlagSet returns a flagSet that reports errors instead of exiting and
// printing: parse errors come back as one-line errors, and -h comes back
// as a *helpRequest, which the dispatcher prints.
func newFlagSet(name, synopsis string, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, synopsis: synopsis}
}

// usageWith records the synopsis and examples printed by -h for fs.
func usageWith(fs *flagSet, stderr io.Writer, synopsis, examples string) {
	fs.synopsis, fs.examples = synopsis, examples
}

// Parse parses args; -h returns a *helpRequest for fs.
func (fs *flagSet) Parse(args []string) error {
	err := fs.FlagSet.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return &helpRequest{fs: fs}
	}
	return err
}

// ParseInterleaved parses flags that may come before or after the
// positional arguments, and returns the latter.
func (fs *flagSet) ParseInterleaved(args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// helpRequest is the error a command returns for -h: the dispatcher prints
// the command's help to standard output and exits 0.
type helpRequest struct{ fs *flagSet }

// Error says what was asked.
func (h *helpRequest) Error() string { return "help requested" }

// Unwrap makes a helpRequest a flag.ErrHelp.
func (h *helpRequest) Unwrap() error { return flag.ErrHelp }

// print writes the command's usage: synopsis, summary, flags, examples.
func (h *helpRequest) print(w io.Writer) {
	fs := h.fs
	summary := commands[fs.Name()].summary
	fmt.Fprintf(w, "usage: latscope %s\n\n%s\n", fs.synopsis, summary)
	any := false
	fs.VisitAll(func(*flag.Flag) { any = true })
	if any {
		fmt.Fprint(w, "\nflags:\n")
		printFlags(w, fs.FlagSet)
	}
	fmt.Fprint(w, fs.examples)
}

// printFlags is flag.PrintDefaults with one default per flag: a usage text
// that states its own default ("default: estimated from the trace") is not
// followed by the flag's zero value, and a zero value (0, "", false) is
// never printed as a default, whatever the flag's type.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if isAlias(f) {
			return // its flag's line names it
		}
		var b strings.Builder
		fmt.Fprintf(&b, "  -%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" " + name)
		}
		if b.Len() <= 4 { // a one-letter flag without a value name fits on one line
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if def := f.DefValue; !strings.Contains(usage, "default") && def != "" && def != "0" && def != "0s" && def != "false" && def != "[]" {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					def = strconv.Quote(def)
				}
			}
			fmt.Fprintf(&b, " (default %s)", def)
		}
		fmt.Fprintln(w, b.String())
	})
}

// isAlias tells a flag kept as another name of a flag ("the same as
// --what-if SPEC"): help lists it on the line of the flag it stands for.
func isAlias(f *flag.Flag) bool {
	return strings.HasPrefix(f.Usage, "the same as ") || strings.HasPrefix(f.Usage, "same as ")
}
