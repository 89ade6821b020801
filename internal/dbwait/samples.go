package dbwait

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/latscope/latscope/internal/hostsig"
)

// maxSampleLine bounds one line of a samples file.
const maxSampleLine = 1 << 20

// ReadSamples reads a samples file: one host sample per line in the text
// form of hostsig.Sample.MarshalText (what an agent logs into a trace under
// hostsig.LogCategory), or that text as a JSON string (what json.Marshal of
// a Sample writes). Blank lines and lines starting with # are skipped.
// name is used in errors, which give the line number.
func ReadSamples(name string, r io.Reader, fn func(hostsig.Sample)) error {
	er := &errReader{r: r}
	sc := bufio.NewScanner(er)
	sc.Buffer(make([]byte, 0, 64<<10), maxSampleLine)
	for n := 1; sc.Scan(); n++ {
		if er.err != nil && er.err != io.EOF {
			// the line may be cut short by the error: not parsed
			return fmt.Errorf("%s: line %d: %w", name, n, er.err)
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		text := string(line)
		if line[0] == '"' {
			if err := json.Unmarshal(line, &text); err != nil {
				return fmt.Errorf("%s: line %d: not a JSON string: %w", name, n, err)
			}
		}
		s, err := hostsig.ParseLog(text)
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", name, n, err)
		}
		fn(s)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// errReader passes r through and keeps its last error.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.err = err
	return n, err
}
