package pgcluster

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
)

// tailBytes bounds how much of a log goes into an error message.
const tailBytes = 2048

// tail returns at most the last n bytes of b, starting at a line boundary
// when one is available, without a trailing newline.
func tail(b []byte, n int) string {
	b = bytes.TrimRight(b, "\n")
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// serverLogTail gathers the tails of pg_ctl.log (start-up errors before
// the logging collector runs) and of the newest file in the server's log
// directory, for an error message.
func serverLogTail(dir string) string {
	var out []byte
	if b, err := os.ReadFile(filepath.Join(dir, pgctlLog)); err == nil && len(b) > 0 {
		out = append(out, "--- "+pgctlLog+" ---\n"+tail(b, tailBytes)+"\n"...)
	}
	if p := newestFile(filepath.Join(dir, dataDir, "log")); p != "" {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			out = append(out, "--- "+filepath.Base(p)+" ---\n"+tail(b, tailBytes)+"\n"...)
		}
	}
	return string(bytes.TrimRight(out, "\n"))
}

// newestFile returns the path of the last-named regular file in dir (server
// log names sort by time), or "".
func newestFile(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return ""
	}
	return filepath.Join(dir, slices.Max(names))
}
