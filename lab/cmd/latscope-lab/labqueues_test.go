package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/cli"
	"github.com/latscope/latscope/lab/queues"
)

// TestQueuesVerdict: the queues lab exits 1 when a prediction missed its
// re-measured run (a failed check, as in every lab), 0 when all passed.
func TestQueuesVerdict(t *testing.T) {
	runs := []queues.Run{{Pass: true}, {Pass: false}}
	err := queuesVerdict(&queues.Report{Runs: runs, Passed: 1})
	if cli.ExitStatus(err) != 1 || err.Error() != "queues: 1 of 2 predictions missed (causes above)" {
		t.Errorf("a miss: exit %d, %v", cli.ExitStatus(err), err)
	}
	if err := queuesVerdict(&queues.Report{Runs: runs[:1], Passed: 1}); cli.ExitStatus(err) != 0 {
		t.Errorf("all passed: exit %d, %v", cli.ExitStatus(err), err)
	}
}

// TestLabQueuesOutRefused: an -o the queues lab could not write (a
// directory, a file in a directory that does not exist or under a file, a
// symbolic link, latscope itself, which the lab runs as its service) is
// refused before the lab starts, in one line naming the flag, with exit
// status 2, and nothing is written.
func TestLabQueuesOutRefused(t *testing.T) {
	defer func(f func(context.Context, ...string) *exec.Cmd) { labCommand = f }(labCommand)
	labCommand = func(ctx context.Context, args ...string) *exec.Cmd {
		t.Errorf("the lab started: %q", args)
		return exec.CommandContext(ctx, "false")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	before := listDir(t, dir)
	cases := []struct{ o, want string }{
		{dir, "queues: flag -o " + dir + ": is a directory; want a file name"},
		{filepath.Join(dir, "new") + "/", "queues: flag -o " + filepath.Join(dir, "new") + "/: want a file name, not a directory"},
		{filepath.Join(dir, "no", "r.txt"), "queues: flag -o " + filepath.Join(dir, "no", "r.txt") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{filepath.Join(file, "r.txt"), "queues: flag -o: cannot write " + filepath.Join(file, "r.txt") + ": " + file + " is not a directory"},
		{link, "queues: flag -o: refusing to replace " + link + ": it is a symbolic link"},
		{self, "queues: flag -o: refusing to write " + self + ": it is the input"},
	}
	for _, c := range cases {
		for _, args := range [][]string{{"queues", "-o", c.o}, {"queues", "--short", "--json", "-o", c.o}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				stdout, stderr, err := runCLI(t, args...)
				if err == nil || cli.ExitStatus(err) != 2 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.want) {
					t.Errorf("err = %v (exit %d), want exit 2 and one line with %q", err, cli.ExitStatus(err), c.want)
				}
				if stdout != "" || stderr != "" {
					t.Errorf("output: stdout %q, stderr %q", stdout, stderr)
				}
				if got := listDir(t, dir); got != before {
					t.Errorf("directory changed: %q, was %q", got, before)
				}
			})
		}
	}
}

// TestLabQueuesOutWrite: with -o, the file holds what standard output
// would have shown, the runs' lines or the JSON, and standard output holds
// nothing.
func TestLabQueuesOutWrite(t *testing.T) {
	rep := &queues.Report{Runs: []queues.Run{{Case: "pool", Clients: 6, Pass: true}}, Passed: 1}
	lines := []byte("pool 6 clients: a run's line\n")
	dir := t.TempDir()
	for _, asJSON := range []bool{false, true} {
		// without -o, the lines went to stdout as the runs ended
		want := bytes.NewBuffer(slices.Clone(lines))
		if asJSON {
			want.Reset()
		}
		if err := writeQueuesReport(&cli.ReportFile{}, want, rep, nil, asJSON); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("json-%v.txt", asJSON))
		var stdout bytes.Buffer
		if err := writeQueuesReport(&cli.ReportFile{Path: path}, &stdout, rep, lines, asJSON); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if stdout.Len() != 0 || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("json %v: stdout %q, file %q, want the file to hold %q", asJSON, stdout.String(), got, want.String())
		}
	}
}
