package pglog_test

import (
	"testing"

	"github.com/latscope/latscope/internal/pglog"
)

func TestFindTraceParent(t *testing.T) {
	tests := []struct {
		name, sql string
		ok        bool
	}{
		{"prefix", "/*traceparent='" + validTP + "'*/ SELECT 1", true},
		{"suffix", "SELECT 1 /*traceparent='" + validTP + "'*/", true},
		{"among pairs", "SELECT 1 /*action='%2Fparam*d',controller='index',traceparent='" + validTP + "',tracestate='congo%3Dt61rcWkgMzE'*/", true},
		{"url-encoded", "SELECT 1 /*traceparent='00%2D0af7651916cd43dd8448eb211c80319c%2Db7ad6b7169203331%2D01'*/", true},
		{"spaces", "SELECT 1 /* traceparent = '" + validTP + "' */", true},
		{"double quotes", `SELECT 1 /*traceparent="` + validTP + `"*/`, true},
		{"unquoted", "SELECT 1 /*traceparent=" + validTP + "*/", true},
		{"second comment", "/* hint */ SELECT /*traceparent='" + validTP + "'*/ 1", true},
		{"first invalid, second valid", "/*traceparent='00-bad'*/ SELECT 1 /*traceparent='" + validTP + "'*/", true},
		{"unterminated comment", "SELECT 1 /*traceparent='" + validTP + "'", true},
		{"escaped quote before", `/*a='x\'y',traceparent='` + validTP + `'*/`, true},
		{"longer key", "/*mytraceparent='" + validTP + "'*/", false},
		{"no comment", "SELECT '" + validTP + "'", false},
		{"line comment", "-- traceparent='" + validTP + "'\nSELECT 1", false},
		{"no value", "/*traceparent*/", false},
		{"empty", "", false},
		{"open only", "/*", false},
	}
	want, _ := pglog.ParseTraceParent(validTP)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pglog.FindTraceParent(tt.sql)
			if ok != tt.ok || (ok && got != want) {
				t.Errorf("FindTraceParent(%q) = %v, %v; want ok %v", tt.sql, got, ok, tt.ok)
			}
		})
	}
}

func TestComment(t *testing.T) {
	tp, _ := pglog.ParseTraceParent(validTP)
	tests := []struct {
		name string
		tp   pglog.TraceParent
		kv   []string
		want string
	}{
		{"traceparent only", tp, nil, "/*traceparent='" + validTP + "'*/"},
		{"sorted and encoded", tp, []string{"route", "/polls 1000", "action", "run*/'x'", "framework", "go:1.26"},
			"/*action='run%2A/%27x%27',framework='go%3A1.26',route='/polls%201000',traceparent='" + validTP + "'*/"},
		{"tp wins over kv", tp, []string{"traceparent", "nope"}, "/*traceparent='" + validTP + "'*/"},
		{"later duplicate wins, unpaired key dropped", pglog.TraceParent{}, []string{"a", "1", "a", "2", "b"}, "/*a='2'*/"},
		{"nothing", pglog.TraceParent{}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pglog.Comment(tt.tp, tt.kv...); got != tt.want {
				t.Errorf("Comment = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCommentRoundTrip(t *testing.T) {
	tp, _ := pglog.ParseTraceParent(validTP)
	kvs := [][]string{nil, {"route", "*/ DROP TABLE x; /*"}, {"zz", "'", "aa", "%2D"}, {"traceparent", "00-x"}}
	for _, kv := range kvs {
		sql := pglog.Comment(tp, kv...) + " SELECT 1"
		if got, ok := pglog.FindTraceParent(sql); !ok || got != tp {
			t.Errorf("FindTraceParent(%q) = %v, %v; want %v", sql, got, ok, tp)
		}
	}
}
