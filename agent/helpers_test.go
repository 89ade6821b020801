package agent

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/latscope/latscope/pgcluster/pgtest"
	"github.com/latscope/latscope/tracein"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// traceEvents reads the task, region and log records of a trace.
func traceEvents(t *testing.T, name string, r io.Reader) []tracein.Event {
	t.Helper()
	tr, err := tracein.NewReader(name, r)
	if err != nil {
		t.Fatal(err)
	}
	var out []tracein.Event
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case tracein.KindLog, tracein.KindRegionBegin, tracein.KindRegionEnd, tracein.KindTaskBegin, tracein.KindTaskEnd:
			out = append(out, ev)
		}
	}
}

// traceFileEvents reads traceEvents from a file.
func traceFileEvents(t *testing.T, path string) []tracein.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return traceEvents(t, path, bytes.NewReader(b))
}

// logs returns the messages of category cat.
func logs(evs []tracein.Event, cat string) []tracein.Event {
	var out []tracein.Event
	for _, ev := range evs {
		if ev.Kind == tracein.KindLog && ev.Name == cat {
			out = append(out, ev)
		}
	}
	return out
}

// inRegion reports whether the log ev happened inside an open region named
// region on its goroutine.
func inRegion(evs []tracein.Event, ev tracein.Event, region string) bool {
	depth := map[string]int{}
	for _, e := range evs {
		if e.G != ev.G {
			continue
		}
		switch {
		case e.Kind == tracein.KindRegionBegin:
			depth[e.Name]++
		case e.Kind == tracein.KindRegionEnd:
			depth[e.Name]--
		case e == ev:
			return depth[region] > 0
		}
	}
	return false
}

// burn spends about d of CPU.
func burn(d time.Duration) {
	var sum [32]byte
	for start := time.Now(); time.Since(start) < d; {
		sum = sha256.Sum256(sum[:])
	}
}

// get fetches url and returns the status and body.
func get(t *testing.T, c *http.Client, url string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
