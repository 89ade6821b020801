// Package cli is what latscope's binaries share on the command line: the
// command table, the dispatcher, flag sets whose -h and errors come back
// as values, the one-line error, the exit status, the -o report file and
// the version command. A binary's main sets Name (and Examples, and for
// the lab a Default command), each command's file registers itself from
// init, and main returns Main's status.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// Name is the program's name in usage lines and error messages
// ("latscope", "latscope-lab"); the binary's main sets it.
var Name = "latscope"

// Examples are printed under the program's command list.
var Examples string

// Default, when set, is run for arguments that name no command: the lab's
// scenario runner (latscope-lab [flags] [SCENARIO]). Without it such an
// argument is an unknown command.
var Default *Command

// Command is one subcommand: a one-line summary for the usage text, and
// a function that parses its own flags from args.
type Command struct {
	Summary string
	Run     func(ctx context.Context, stdout, stderr io.Writer, args []string) error
	// Topics, for the Default command, are the arguments it takes that
	// `help` names too (the lab's scenarios): `help TOPIC` prints the
	// Default command's help. TopicNoun names one in errors ("scenario").
	Topics    func() []string
	TopicNoun string
}

// commands is the command table. Each entry lives in its own file.
var commands = map[string]Command{}

// Register adds a command to the table; every command's file calls it
// from init.
func Register(name, summary string, run func(ctx context.Context, stdout, stderr io.Writer, args []string) error) {
	if _, dup := commands[name]; dup {
		panic(Name + ": command " + name + " registered twice")
	}
	commands[name] = Command{Summary: summary, Run: run}
}

// Lookup returns the command named name.
func Lookup(name string) (Command, bool) {
	c, ok := commands[name]
	return c, ok
}

// Names lists the commands, sorted.
func Names() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Main runs the program with args and returns the process exit status:
// 0 when the command ran and all is well, 1 when it ran and a verdict or
// check it reports failed (a lab check, a missed prediction), 2 on any
// usage or input error. The error is printed as one line (with --debug or
// LATSCOPE_DEBUG=1, followed by its details).
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels the command, which stops within a second;
	// a second one ends the process, as a stuck command must be.
	go func() { <-ctx.Done(); stop() }()
	debug, _ := globalFlags(args)
	err := Run(ctx, os.Stdout, os.Stderr, args)
	if err != nil {
		PrintError(os.Stderr, err, debug)
	}
	return ExitStatus(err)
}

// ExitStatus is the process exit status for a command's error.
func ExitStatus(err error) int {
	switch _, verdict := errors.AsType[*FailedVerdict](err); {
	case err == nil:
		return 0
	case verdict:
		return 1
	}
	return 2
}

// FailedVerdict is the error of a command that ran to the end and whose
// verdict is a failure: a lab check not met, a prediction missed. Its exit
// status is 1, not the 2 of a usage or input error.
type FailedVerdict struct{ msg string }

func (e *FailedVerdict) Error() string { return e.msg }

// VerdictFailed returns a FailedVerdict with a formatted message.
func VerdictFailed(format string, args ...any) error {
	return &FailedVerdict{msg: fmt.Sprintf(format, args...)}
}

// isHelp tells a help flag given where a command would be.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// Run dispatches args to a command. It never exits the process. Errors of
// a command are wrapped so that their text starts with the command's name.
func Run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	_, args = globalFlags(args)
	if len(args) > 0 && (isHelp(args[0]) || args[0] == "help") {
		if len(args) > 1 && args[1] != "help" {
			if _, ok := commands[args[1]]; ok {
				return Run(ctx, stdout, stderr, []string{args[1], "-h"})
			}
			if Default != nil && Default.Topics != nil && slices.Contains(Default.Topics(), args[1]) {
				return finish(stdout, "", Default.Run(ctx, io.Discard, io.Discard, []string{"-h"}))
			}
			what, names := "command", Names()
			if Default != nil && Default.Topics != nil {
				what, names = "command or "+Default.TopicNoun, append(names, Default.Topics()...)
			}
			return fmt.Errorf("help: unknown %s %q (%s)", what, args[1], strings.Join(names, ", "))
		}
		return usage(ctx, stdout)
	}
	if len(args) > 0 {
		if c, ok := commands[args[0]]; ok {
			return finish(stdout, args[0], c.Run(ctx, stdout, stderr, args[1:]))
		}
	}
	if Default != nil {
		return finish(stdout, "", Default.Run(ctx, stdout, stderr, args))
	}
	switch {
	case len(args) == 0:
		usage(ctx, stdout)
		return errors.New("no command given (see the list above)")
	case strings.HasPrefix(args[0], "-"):
		return fmt.Errorf("unknown global flag %s (global flags: --debug; a command's flags go after it)", args[0])
	}
	return fmt.Errorf("unknown command %q (commands: %s)", args[0], strings.Join(Names(), ", "))
}

// finish prints a command's help when it asked for it, and wraps its
// error as the command's.
func finish(stdout io.Writer, name string, err error) error {
	if help, ok := errors.AsType[*HelpRequest](err); ok {
		help.print(stdout, name)
		return nil
	}
	return inCommand(name, err)
}

// usage prints the program's usage: the Default command's help first
// when there is one, then the commands.
func usage(ctx context.Context, w io.Writer) error {
	if Default != nil {
		if help, ok := errors.AsType[*HelpRequest](Default.Run(ctx, io.Discard, io.Discard, []string{"-h"})); ok {
			help.print(w, "")
		}
		fmt.Fprintln(w, "\ncommands:")
	} else {
		fmt.Fprintf(w, "usage: %s [--debug] <command> [flags] [args]\n", Name)
		fmt.Fprintln(w, "\ncommands:")
	}
	for _, n := range Names() {
		fmt.Fprintf(w, "  %-13s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> -h' (or '%s help <command>') for a command's flags.\n", Name, Name)
	fmt.Fprintf(w, "--debug (or %s=1) prints an error's details after its one line.\n", DebugEnv)
	if Examples != "" {
		fmt.Fprintln(w, Examples)
	}
	return nil
}
