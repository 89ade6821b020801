package pglog_test

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/pglog"
)

const validTP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func TestParseTraceParent(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{validTP, ""},
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", ""},
		{"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future", ""},
		{"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", ""},
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x", "trailing"},
		{"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x", "trailing"},
		{"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "version"},
		{"0g-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "version"},
		{"00-00000000000000000000000000000000-b7ad6b7169203331-01", "trace-id"},
		{"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", "trace-id"},
		{"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "parent-id"},
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-zz", "flags"},
		{"00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01", "want version"},
		{"00-0af7", "too short"},
		{"", "too short"},
	}
	for _, tt := range tests {
		tp, err := pglog.ParseTraceParent(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseTraceParent(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTraceParent(%q): %v", tt.in, err)
			continue
		}
		if got := tp.String(); got != "00"+tt.in[2:55] {
			t.Errorf("String() = %s, want %s", got, "00"+tt.in[2:55])
		}
	}
}

func TestTraceParentFields(t *testing.T) {
	tp, err := pglog.ParseTraceParent(validTP)
	if err != nil {
		t.Fatal(err)
	}
	if tp.TraceID[0] != 0x0a || tp.TraceID[15] != 0x9c || tp.SpanID[0] != 0xb7 || tp.Flags != 1 || !tp.Sampled() || !tp.IsValid() {
		t.Errorf("fields: %+v", tp)
	}
	if (pglog.TraceParent{}).IsValid() {
		t.Error("zero TraceParent is valid")
	}
}
