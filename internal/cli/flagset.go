package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// FlagSet is a command's flag set with what its -h prints beside the
// flags.
type FlagSet struct {
	*flag.FlagSet
	synopsis, examples string
}

// NewFlagSet returns a FlagSet that reports errors instead of exiting and
// printing: parse errors come back as one-line errors, and -h comes back
// as a *HelpRequest, which the dispatcher prints.
func NewFlagSet(name, synopsis string, stderr io.Writer) *FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &FlagSet{FlagSet: fs, synopsis: synopsis}
}

// UsageWith records the synopsis and examples printed by -h for fs.
func UsageWith(fs *FlagSet, stderr io.Writer, synopsis, examples string) {
	fs.synopsis, fs.examples = synopsis, examples
}

// Parse parses args; -h returns a *HelpRequest for fs.
func (fs *FlagSet) Parse(args []string) error {
	err := fs.FlagSet.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return &HelpRequest{fs: fs}
	}
	return err
}

// ParseInterleaved parses flags that may come before or after the
// positional arguments, and returns the latter.
func (fs *FlagSet) ParseInterleaved(args []string) ([]string, error) {
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

// HelpRequest is the error a command returns for -h: the dispatcher prints
// the command's help to standard output and exits 0.
type HelpRequest struct{ fs *FlagSet }

// Error says what was asked.
func (h *HelpRequest) Error() string { return "help requested" }

// Unwrap makes a HelpRequest a flag.ErrHelp.
func (h *HelpRequest) Unwrap() error { return flag.ErrHelp }

// Flags is the flag set of the command that asked for help.
func (h *HelpRequest) Flags() *flag.FlagSet { return h.fs.FlagSet }

// print writes the usage of the command named name ("" for Default):
// synopsis, summary, flags, examples.
func (h *HelpRequest) print(w io.Writer, name string) {
	fs := h.fs
	summary := commands[name].Summary
	if name == "" && Default != nil {
		summary = Default.Summary
	}
	fmt.Fprintf(w, "usage: %s %s\n\n%s\n", Name, fs.synopsis, summary)
	any := false
	fs.VisitAll(func(*flag.Flag) { any = true })
	if any {
		fmt.Fprint(w, "\nflags:\n")
		printFlags(w, fs.FlagSet)
	}
	fmt.Fprint(w, fs.examples)
}

// FlagsOf asks the command named name ("" for Default) for its -h and
// returns its flag set: what the docs' tests check every flag of.
func FlagsOf(ctx context.Context, name string) (*flag.FlagSet, error) {
	c, ok := commands[name]
	if name == "" && Default != nil {
		c, ok = *Default, true
	}
	if !ok {
		return nil, fmt.Errorf("no command %q", name)
	}
	err := c.Run(ctx, io.Discard, io.Discard, []string{"-h"})
	if h, ok := errors.AsType[*HelpRequest](err); ok {
		return h.Flags(), nil
	}
	return nil, fmt.Errorf("%s -h: %v, want a help request (does it use cli.NewFlagSet?)", name, err)
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
