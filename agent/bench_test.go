package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/pgcluster/pgtest"
)

// BenchmarkHandler measures the middleware alone, in process, without the
// network: a plain mux, the agent without and with its flight recorder.
func BenchmarkHandler(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello"))
	})
	for _, bc := range []struct {
		name string
		opts *Options
	}{
		{"plain", nil},
		{"agent-no-recorder", &Options{NoRecorder: true}},
		{"agent-recorder", &Options{Dir: b.TempDir()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var h http.Handler = mux
			if bc.opts != nil {
				a, err := New(*bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				defer a.Close()
				h = a.Handler(mux)
			}
			req := httptest.NewRequest(http.MethodGet, "/hello/x", nil)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w := httptest.NewRecorder()
				for pb.Next() {
					w.Body.Reset()
					h.ServeHTTP(w, req)
				}
			})
		})
	}
}

// BenchmarkPgxStatementCache measures what a per-request comment does to
// pgx's statement cache: every commented statement is new to the cache.
func BenchmarkPgxStatementCache(b *testing.B) {
	url := pgtest.Shared(b).URL()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec} {
		for _, comment := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/comment=%v", mode, comment), func(b *testing.B) {
				cfg, err := pgx.ParseConfig(url)
				if err != nil {
					b.Fatal(err)
				}
				cfg.DefaultQueryExecMode = mode
				ctx := context.Background()
				conn, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close(ctx)
				args := []any{1}
				if comment {
					args = []any{SQLComment{}, 1}
				}
				var n int
				for b.Loop() {
					if err := conn.QueryRow(ctx, "SELECT $1::int + 1", args...).Scan(&n); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
