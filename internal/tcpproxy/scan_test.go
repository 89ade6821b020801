package tcpproxy

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/latscope/latscope/tracelog"
)

const (
	tpA = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tpB = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
)

// stmt is a statement as the agent sends it: the comment, then the SQL.
func stmt(tp, sql string) string {
	p, err := tracelog.ParseTraceParent(tp)
	if err != nil {
		panic(err)
	}
	return tracelog.SQLComment(p, "route", "GET /x") + " " + sql
}

// scanAll feeds the chunks to one scanner and returns what each gave.
func scanAll(chunks ...string) []string {
	var s tpScanner
	var got []string
	for _, c := range chunks {
		tp, ok := s.scan([]byte(c))
		if !ok {
			got = append(got, "")
			continue
		}
		got = append(got, tp.String())
	}
	return got
}

// TestScanChunk: a chunk's last traceparent in a comment wins; one outside
// a comment (a column compared with a value) is not a statement's.
func TestScanChunk(t *testing.T) {
	for _, tc := range []struct {
		chunk, want string
	}{
		{stmt(tpA, "SELECT 1"), tpA},
		{stmt(tpA, "SELECT 1;") + stmt(tpB, "SELECT 2"), tpB},
		{"/*traceparent='" + tpA + "'*/ SELECT 1", tpA},
		{"SELECT 1 /* traceparent=" + strings.ReplaceAll(tpA, "-", "%2D") + " */", tpA},
		{"SELECT * FROM spans WHERE traceparent='" + tpA + "'", ""},
		{"/* other */ SELECT traceparent FROM spans WHERE traceparent='" + tpA + "'", ""},
		{"/*traceparent='00-00000000000000000000000000000000-b7ad6b7169203331-01'*/ SELECT 1", ""},
		{"SELECT 1", ""},
	} {
		if got := scanAll(tc.chunk)[0]; got != tc.want {
			t.Errorf("scan(%q) = %q, want %q", tc.chunk, got, tc.want)
		}
	}
}

// TestScanSplit: a statement's comment split across two chunks at any
// byte is still found, in the chunk that completes it; the next
// statement's comment then replaces it.
func TestScanSplit(t *testing.T) {
	first := "Q\x00\x00\x00\x10" + stmt(tpA, "SELECT 1") + "\x00"
	second := stmt(tpB, "SELECT 2")
	for cut := 1; cut < len(first); cut++ {
		got := scanAll(first[:cut], first[cut:], second)
		// the chunk that completes the traceparent's value gives it; a cut
		// after its closing quote leaves it whole in the first chunk
		want := []string{"", tpA, tpB}
		if strings.Contains(first[:cut], tpA+"'") {
			want[0], want[1] = tpA, tpA // the second chunk ends the same comment
			if strings.Contains(first[:cut], "*/") {
				want[1] = ""
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("cut at %d (%q | %q): %q, want %q", cut, first[:cut], first[cut:], got, want)
		}
	}
}

// TestScanSplitLongCommentMissed documents the limit: a comment longer
// than MaxSplitComment that is split across chunks is missed, and so is
// one spread over three chunks.
func TestScanSplitLongCommentMissed(t *testing.T) {
	long := "/*pad='" + strings.Repeat("x", MaxSplitComment) + "',traceparent='" + tpA + "'*/ SELECT 1"
	cut := strings.Index(long, "traceparent")
	if got := scanAll(long[:cut], long[cut:]); got[0] != "" || got[1] != "" {
		t.Errorf("long comment split: %q, want it missed (documented)", got)
	}
	if got := scanAll(long); got[0] != tpA {
		t.Errorf("long comment whole: %q, want %s", got, tpA)
	}
	c := stmt(tpA, "SELECT 1")
	i, j := strings.Index(c, "traceparent"), strings.Index(c, tpA)
	if got := scanAll(c[:i], c[i:j], c[j:]); strings.Join(got, "") != "" {
		t.Errorf("comment over three chunks: %q, want it missed (documented)", got)
	}
}

// TestLogNilCostsNothing: with Options.Log nil the client's stream is not
// scanned: copying chunks full of traceparents allocates exactly as much
// as copying chunks without any, which the scanner would not (it makes a
// string per comment it reads).
func TestLogNilCostsNothing(t *testing.T) {
	with := bytes.Repeat([]byte(stmt(tpA, "SELECT 1;")), 200)
	without := bytes.Repeat([]byte("x"), len(with))
	allocs := func(data []byte, lc func() *connLog) float64 {
		return testing.AllocsPerRun(20, func() {
			var n atomic.Int64
			copyCounting(io.Discard, &chunked{data: data, size: 512}, &n, lc())
		})
	}
	none := func() *connLog { return nil }
	if a, b := allocs(with, none), allocs(without, none); a != b {
		t.Errorf("Log nil: %v allocations copying traceparents, %v without; want the same (no scan)", a, b)
	}
	var events int
	logged := func() *connLog { return &connLog{id: 1, log: func(Event) { events++ }} }
	if a, b := allocs(with, logged), allocs(without, logged); a <= b {
		t.Errorf("Log set: %v allocations copying traceparents, %v without; want more (the scan runs)", a, b)
	}
	if events == 0 {
		t.Error("Log set: no events")
	}
}

// chunked is a reader that returns data size bytes at a time.
type chunked struct {
	data []byte
	size int
}

func (c *chunked) Read(b []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), c.size)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// BenchmarkScan is the scan's cost on a 32 KiB chunk without a
// traceparent (bulk data) and on a statement with one.
func BenchmarkScan(b *testing.B) {
	bulk := bytes.Repeat([]byte("0123456789abcdef"), chunkSize/16)
	small := []byte("Q\x00\x00\x00\x10" + stmt(tpA, "SELECT 1") + "\x00")
	for _, bc := range []struct {
		name string
		data []byte
	}{{"bulk32KiB", bulk}, {"statement", small}} {
		b.Run(bc.name, func(b *testing.B) {
			var s tpScanner
			b.SetBytes(int64(len(bc.data)))
			for b.Loop() {
				s.scan(bc.data)
			}
		})
	}
	b.Run("bulk32KiB-IndexOnly", func(b *testing.B) {
		b.SetBytes(int64(len(bulk)))
		for b.Loop() {
			bytes.Index(bulk, tpKey)
		}
	})
}
