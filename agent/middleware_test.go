package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/trace"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/tracelog"

	"github.com/latscope/latscope/agent/internal/agenttest"
)

func TestHandlerRoute(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.PathValue("id"))
	})
	wrappedMux := http.NewServeMux()
	wrappedMux.Handle("GET /items/{id}", ok)
	tests := []struct {
		name     string
		opts     Options
		handler  func(a *Agent) http.Handler
		path     string
		wantTask string
		wantBody string
	}{
		{"whole mux", Options{}, func(a *Agent) http.Handler { return a.Handler(wrappedMux) }, "/items/7", "GET /items/{id}", "7"},
		{"unmatched", Options{}, func(a *Agent) http.Handler { return a.Handler(wrappedMux) }, "/nothing", "(no route)", "404 page not found\n"},
		{"one route", Options{}, func(a *Agent) http.Handler {
			m := http.NewServeMux()
			m.Handle("GET /one/{id}", a.Handler(ok))
			return m
		}, "/one/8", "GET /one/{id}", "8"},
		{"plain handler", Options{}, func(a *Agent) http.Handler { return a.Handler(ok) }, "/x", "http", ""},
		{"Route hook", Options{Route: func(r *http.Request) string { return "custom " + r.Method }},
			func(a *Agent) http.Handler { return a.Handler(wrappedMux) }, "/items/9", "custom GET", "9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.NoRecorder = true
			a, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			srv := httptest.NewServer(tt.handler(a))
			defer srv.Close()
			var body []byte
			evs := traced(t, func() { _, body = get(t, nil, srv.URL+tt.path) })
			if string(body) != tt.wantBody {
				t.Errorf("body %q, want %q (the wrapped mux must still route)", body, tt.wantBody)
			}
			var tasks []string
			for _, ev := range evs {
				if ev.Kind == agenttest.KindTaskBegin {
					tasks = append(tasks, ev.Name)
				}
			}
			if !slices.Equal(tasks, []string{tt.wantTask}) {
				t.Errorf("tasks %q, want [%q]", tasks, tt.wantTask)
			}
		})
	}
}

// TestTraceParent checks what an upstream receives through Transport from
// a service behind Handler.
func TestTraceParent(t *testing.T) {
	const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const preset = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	hook := tracelog.TraceParent{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5, 6}, Flags: 1}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("traceparent"))
	}))
	defer upstream.Close()
	tests := []struct {
		name     string
		incoming string
		preset   string
		hook     bool
		check    func(got, self tracelog.TraceParent) string
	}{
		{"child of the caller's trace", incoming, "", false, func(got, self tracelog.TraceParent) string {
			in, _ := tracelog.ParseTraceParent(incoming)
			if got.TraceID != in.TraceID || got.SpanID == in.SpanID || got.SpanID == self.SpanID || got.Flags != 1 {
				return "want the caller's trace ID and flags with a span ID of the call's own"
			}
			return ""
		}},
		{"new unsampled trace", "", "", false, func(got, self tracelog.TraceParent) string {
			if got.TraceID != self.TraceID || got.Flags != 0 {
				return "want the request's new trace, not sampled"
			}
			return ""
		}},
		{"bad incoming header", "00-xyz", "", false, func(got, self tracelog.TraceParent) string {
			if got.TraceID != self.TraceID || !got.IsValid() {
				return "want a new trace"
			}
			return ""
		}},
		{"preset header kept", incoming, preset, false, func(got, self tracelog.TraceParent) string {
			if got.String() != preset {
				return "want the request's own header"
			}
			return ""
		}},
		{"SpanContext hook", incoming, "", true, func(got, self tracelog.TraceParent) string {
			if got != hook || self != hook {
				return "want the hook's span for the request and the call"
			}
			return ""
		}},
	}
	client := &http.Client{Transport: Transport(nil)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{NoRecorder: true}
			if tt.hook {
				opts.SpanContext = func(context.Context) (tracelog.TraceParent, bool) { return hook, true }
			}
			a, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var self tracelog.TraceParent
			svc := httptest.NewServer(a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				self, _ = TraceParent(r.Context())
				req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, upstream.URL, nil)
				if tt.preset != "" {
					req.Header.Set("traceparent", tt.preset)
				}
				resp, err := client.Do(req)
				if err != nil {
					http.Error(w, err.Error(), 502)
					return
				}
				defer resp.Body.Close()
				io.Copy(w, resp.Body)
				if tt.preset != "" && req.Header.Get("traceparent") != tt.preset || tt.preset == "" && req.Header.Get("traceparent") != "" {
					t.Error("Transport modified the caller's request")
				}
			})))
			defer svc.Close()
			var header []string
			if tt.incoming != "" {
				header = []string{"traceparent", tt.incoming}
			}
			code, body := get(t, nil, svc.URL, header...)
			got, err := tracelog.ParseTraceParent(string(body))
			if code != 200 || err != nil {
				t.Fatalf("upstream saw traceparent %q (status %d): %v", body, code, err)
			}
			if msg := tt.check(got, self); msg != "" {
				t.Errorf("upstream saw %v, request span %v: %s", got, self, msg)
			}
		})
	}
}

// TestTransportLog: the traceparent sent is logged inside the call's region.
func TestTransportLog(t *testing.T) {
	var seen string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Get("traceparent")
	}))
	defer upstream.Close()
	client := &http.Client{Transport: Transport(nil)}
	evs := traced(t, func() {
		ctx, task := trace.NewTask(context.Background(), "job")
		defer task.End()
		resp, err := client.Get(upstream.URL) // no request context: a new trace
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, upstream.URL, nil)
		if resp, err = client.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	l := logs(evs, tracelog.HTTP)
	if len(l) != 2 || l[1].Message != seen {
		t.Fatalf("%s logs %v, want two, the last %q", tracelog.HTTP, l, seen)
	}
	region := tracelog.HTTPRegionPrefix + strings.TrimPrefix(upstream.URL, "http://")
	for _, ev := range l {
		if !inRegion(evs, ev, region) {
			t.Errorf("log %q not inside region %q", ev.Message, region)
		}
	}
}
