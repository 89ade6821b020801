package tracelog

import (
	"testing"
	"time"
)

func TestRegionKind(t *testing.T) {
	for name, want := range map[string]string{
		"http upstream:8080":         KindHTTP,
		"sql":                        KindDB,
		"rpc /pkg.Svc/Get":           KindRPC,
		"db postgresql":              KindDB,
		"cache redis":                KindCache,
		"call publish orders":        KindCall,
		"http":                       "",
		"rpc ":                       "",
		"render":                     "",
		"GET /users/{id}":            "",
		HTTPRegionPrefix + "h":       KindHTTP,
		RPCRegionPrefix + "/a.B/C":   KindRPC,
		DBRegionPrefix + "mysql":     KindDB,
		CacheRegionPrefix + "valkey": KindCache,
		CallRegionPrefix + "x":       KindCall,
	} {
		if got := RegionKind(name); got != want {
			t.Errorf("RegionKind(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestAppendTraceParent(t *testing.T) {
	for _, s := range []string{
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-11111111111111111111111111111111-2222222222222222-00",
		"00-ffffffffffffffffffffffffffffffff-0000000000000001-ff",
	} {
		tp, err := ParseTraceParent(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendTraceParent(nil, tp)); got != s || got != tp.String() {
			t.Errorf("AppendTraceParent(%v) = %q, want %q", tp, got, s)
		}
	}
	tp, _ := ParseTraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = AppendTraceParent(buf[:0], tp) }); n != 0 {
		t.Errorf("AppendTraceParent into room: %v allocations, want 0", n)
	}
}

func TestSpanEndRoundTrip(t *testing.T) {
	tp, _ := ParseTraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	msg := FormatSpanEnd(tp.String(), 1500*time.Microsecond)
	if want := "traceparent=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 duration_ns=1500000"; msg != want {
		t.Errorf("FormatSpanEnd = %q, want %q", msg, want)
	}
	e, err := ParseSpanEnd(msg)
	if err != nil || e.TraceParent != tp || e.Duration != 1500*time.Microsecond {
		t.Errorf("ParseSpanEnd(%q) = %+v, %v", msg, e, err)
	}
}
