package agent

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/agenttest"

	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/tracein"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The trace readers the agent's tests share with agentpgx's.
var (
	traceEvents  = agenttest.Events
	traced       = agenttest.Traced
	logs         = agenttest.Logs
	inRegion     = agenttest.InRegion
	parseAll     = agenttest.ParseAll
	jobSpan      = agenttest.JobSpan
	jobContext   = agenttest.JobContext
	pgxConfig    = agenttest.PgxConfig
	checkComment = agenttest.CheckComment
)

// traceFileEvents reads traceEvents from a file.
func traceFileEvents(t *testing.T, path string) []tracein.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return traceEvents(t, path, bytes.NewReader(b))
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
