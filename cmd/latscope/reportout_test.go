package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/latscope/latscope/internal/cli"
)

// reportCommands are the commands whose report -o writes, text and JSON:
// analyze, compare, predict and dbwait.
func reportCommands(t *testing.T) [][]string {
	serial, wg := fixtureTrace(t, "serial"), fixtureTrace(t, "waitgroup")
	tr, pg := dbwaitCapture(t, "pause")
	return [][]string{
		{"dbwait", "--pglog", pg, tr},
		{"dbwait", "--json", "--pglog", pg, tr},
		{"analyze", serial},
		{"analyze", "--json", "--what-if", "remove=lockedSection", serial},
		{"analyze", serial, wg},
		{"analyze", "--json", serial, wg},
		{"compare", "--what-if", "overlap=callUpstream,queryDB", serial, wg},
		{"compare", "--json", "--what-if", "overlap=callUpstream,queryDB", serial, wg},
		{"predict", "--what-if", "cores=1", serial},
		{"predict", "--json", "--what-if", "cores=1", serial},
	}
}

// TestReportFile: -o writes to FILE exactly what standard output shows
// without it, and nothing to standard output; an existing FILE is replaced.
func TestReportFile(t *testing.T) {
	dir := t.TempDir()
	for _, args := range reportCommands(t) {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want, _, err := runCLI(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "report")
			os.WriteFile(out, []byte("a previous report"), 0o644)
			withO := append([]string{args[0], "-o", out}, args[1:]...)
			stdout, _, err := runCLI(t, withO...)
			if err != nil {
				t.Fatal(err)
			}
			if stdout != "" {
				t.Errorf("with -o, standard output holds %q", stdout)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want || want == "" {
				t.Errorf("-o %s holds %d bytes, standard output %d; they differ", out, len(got), len(want))
			}
			if names := listDir(t, dir); names != "report" {
				t.Errorf("the directory holds %q", names)
			}
		})
	}
}

// TestReportFileRefused: an -o naming a directory, an input or another
// output is refused before the analysis, in one line naming the flag, with
// exit status 2, and nothing is written.
func TestReportFileRefused(t *testing.T) {
	dir := t.TempDir()
	tr := copyFixture(t, dir, "serial")
	page := filepath.Join(dir, "r.html")
	dbwaitTrace, dbwaitPG := dbwaitCapture(t, "baseline")
	before := listDir(t, dir)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"analyze", "-o", dir, tr}, "flag -o " + dir + ": is a directory; want a file name"},
		{[]string{"analyze", "-o", dir, tr, tr}, "flag -o " + dir + ": is a directory"},
		{[]string{"compare", "-o", dir, tr, tr}, "flag -o " + dir + ": is a directory"},
		{[]string{"predict", "-o", dir, tr}, "flag -o " + dir + ": is a directory"},
		{[]string{"predict", "-o", filepath.Join(dir, "new") + "/", tr}, "flag -o " + filepath.Join(dir, "new") + "/: want a file name, not a directory"},
		{[]string{"compare", "-o", filepath.Join(dir, "no", "r.txt"), tr, tr}, "flag -o " + filepath.Join(dir, "no", "r.txt") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{[]string{"analyze", "-o", tr, tr}, "flag -o: refusing to write " + tr + ": it is the input"},
		{[]string{"compare", "-o", tr, tr, tr}, "flag -o: refusing to write " + tr + ": it is the input"},
		{[]string{"analyze", "-o", page, "--html", page, tr}, "flag -o: " + page + " is written twice"},
		{[]string{"dbwait", "-o", dbwaitPG, "--pglog", dbwaitPG, dbwaitTrace}, "flag -o: refusing to write " + dbwaitPG + ": it is the input"},
		{[]string{"dbwait", "-o", dir, "--pglog", dbwaitPG, dbwaitTrace}, "flag -o " + dir + ": is a directory"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, stderr := runExit(t, c.args...)
			if msg := oneLine(t, stderr); code != 2 || !strings.Contains(msg, c.want) {
				t.Errorf("exit %d, stderr %q, want exit 2 and %q", code, msg, c.want)
			}
			if got := listDir(t, dir); got != before {
				t.Errorf("directory changed: %q, was %q", got, before)
			}
		})
	}
}

// TestReportFileWriteError: a write of the -o file that fails (a full
// disk) is an error naming the flag and leaves no file, nor a partial one;
// a previous file stays as it was.
func TestReportFileWriteError(t *testing.T) {
	defer func(f func(io.Writer) io.Writer) { cli.ReportOutput = f }(cli.ReportOutput)
	cli.ReportOutput = func(w io.Writer) io.Writer { return &failingWriter{w: w, left: 100} }
	dir := t.TempDir()
	for _, args := range reportCommands(t) {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out := filepath.Join(dir, "new.txt")
			withO := append([]string{args[0], "-o", out}, args[1:]...)
			stdout, _, err := runCLI(t, withO...)
			if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), args[0]+": flag -o: writing "+out) {
				t.Errorf("err = %v, want ENOSPC naming -o and %s", err, out)
			}
			if stdout != "" {
				t.Errorf("standard output holds %q", stdout)
			}
			if got := listDir(t, dir); got != "" {
				t.Errorf("a failed write left %q", got)
			}
		})
	}
	old := filepath.Join(dir, "old.txt")
	os.WriteFile(old, []byte("a previous report"), 0o644)
	if _, _, err := runCLI(t, "predict", "-o", old, fixtureTrace(t, "serial")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("err = %v, want ENOSPC", err)
	}
	if b, _ := os.ReadFile(old); string(b) != "a previous report" || listDir(t, dir) != "old.txt" {
		t.Errorf("after a failed write, the previous file holds %q and the directory %q", b, listDir(t, dir))
	}
}
