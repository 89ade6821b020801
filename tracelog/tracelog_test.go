package tracelog

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSQLEndRoundTrip(t *testing.T) {
	tp, _ := ParseTraceParent("00-11111111111111111111111111111111-2222222222222222-01")
	tests := []struct {
		e    SQLEndMsg
		text string
	}{
		{SQLEndMsg{tp, 0}, "traceparent=00-11111111111111111111111111111111-2222222222222222-01 duration_ns=0"},
		{SQLEndMsg{tp, 48213377}, "traceparent=00-11111111111111111111111111111111-2222222222222222-01 duration_ns=48213377"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.text {
			t.Errorf("String() = %q, want %q", got, tt.text)
		}
		if got, err := ParseSQLEnd(tt.text); err != nil || got != tt.e {
			t.Errorf("ParseSQLEnd(%q) = %+v, %v; want %+v", tt.text, got, err, tt.e)
		}
	}
	for _, bad := range []string{
		"",
		"00-11111111111111111111111111111111-2222222222222222-01",
		"traceparent=00-11111111111111111111111111111111-2222222222222222-01",
		"traceparent=00-11111111111111111111111111111111-2222222222222222-01 duration_ns=-1",
		"traceparent=00-11111111111111111111111111111111-2222222222222222-01 duration_ns=1ms",
		"traceparent=xx duration_ns=1",
		"duration_ns=1 traceparent=00-11111111111111111111111111111111-2222222222222222-01",
	} {
		if _, err := ParseSQLEnd(bad); err == nil {
			t.Errorf("ParseSQLEnd(%q) succeeded", bad)
		}
	}
}

func FuzzParseSQLEnd(f *testing.F) {
	f.Add("traceparent=00-11111111111111111111111111111111-2222222222222222-01 duration_ns=48213377")
	f.Add("traceparent=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00 duration_ns=0")
	f.Add("traceparent= duration_ns=")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseSQLEnd(s)
		if err != nil {
			return
		}
		again, err := ParseSQLEnd(e.String())
		if err != nil || again != e {
			t.Fatalf("%q parsed to %+v, which formats to %q and parses back to %+v, %v", s, e, e.String(), again, err)
		}
	})
}

func TestBound(t *testing.T) {
	long := strings.Repeat("€", 1000) // 3 bytes each
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"", 10, ""},
		{"GET /x", 6, "GET /x"},
		{"GET /xy", 6, "GET /x"},                   // n < len(CutMark) (8 bytes): a prefix, unmarked
		{"abcdefghijklmnop", 12, "abcd" + CutMark}, // 4 + 8 bytes
		{"ab€defghijklmnop", 12, "ab" + CutMark},   // not inside the €
		{"ab€defghijklmnop", 14, "ab€d" + CutMark}, // after it
		{long, 20, "€€€€" + CutMark},
		{long, 19, "€€€" + CutMark},
		{strings.Repeat("\x80", 16), 13, "\x80\x80" + CutMark}, // invalid bytes: backs up 3 at most
	}
	for _, tt := range tests {
		got := Bound(tt.s, tt.n)
		if got != tt.want {
			t.Errorf("Bound(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if len(got) > tt.n {
			t.Errorf("Bound(%q, %d) is %d bytes", tt.s, tt.n, len(got))
		}
	}
	got := Bound(long, MaxString)
	if len(got) > MaxString || len(got) < MaxString-len(CutMark)-utf8.UTFMax || !utf8.ValidString(got) || !strings.HasSuffix(got, CutMark) {
		t.Errorf("Bound(3000 bytes, MaxString) = %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
