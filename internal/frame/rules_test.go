package frame

import "testing"

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		app      []string
		stack    []string
		wantApp  string
		wantMech string
	}{
		{"mutex", nil, []string{"runtime.gopark", "runtime.semacquire1", "internal/sync.runtime_SemacquireMutex", "internal/sync.(*Mutex).lockSlow", "internal/sync.(*Mutex).Lock", "sync.(*Mutex).Lock", "main.lockedSection", "main.handle"}, "main.lockedSection", "sync.(*Mutex).Lock"},
		{"http client", nil, []string{"runtime.gopark", "runtime.selectgo", "net/http.(*persistConn).roundTrip", "net/http.(*Transport).roundTrip", "net/http.(*Client).Do", "main.callUpstream", "main.handle"}, "main.callUpstream", "net/http.(*persistConn).roundTrip"},
		{"raw net", nil, []string{"runtime.gopark", "runtime.netpollblock", "internal/poll.runtime_pollWait", "internal/poll.(*pollDesc).wait", "internal/poll.(*FD).Read", "net.(*netFD).Read", "net.(*conn).Read", "bufio.(*Reader).fill", "main.queryDb", "main.handle.func3.1"}, "main.queryDb", "net.(*netFD).Read"},
		{"pgx pool", nil, []string{"runtime.selectgo", "golang.org/x/sync/semaphore.(*Weighted).Acquire", "github.com/jackc/puddle/v2.(*Pool[...]).acquire", "github.com/jackc/pgx/v5/pgxpool.(*Pool).Acquire", "github.com/acme/svc/store.(*DB).Get", "main.handle"}, "github.com/acme/svc/store.(*DB).Get", "github.com/jackc/pgx/v5/pgxpool.(*Pool).Acquire"},
		{"user select", nil, []string{"runtime.gopark", "runtime.selectgo", "main.worker"}, "main.worker", ""},
		{"no app frame", nil, []string{"runtime.gopark", "net/http.(*persistConn).readLoop"}, "", "net/http.(*persistConn).readLoop"},
		{"app prefix", []string{"github.com/acme/"}, []string{"runtime.gopark", "sync.(*WaitGroup).Wait", "github.com/other/lib.Do", "github.com/acme/svc.handle", "main.main"}, "github.com/acme/svc.handle", "sync.(*WaitGroup).Wait"},
		{"an organisation's server is the application", nil, []string{"runtime.gopark", "runtime.selectgo", "github.com/prometheus/prometheus/web.(*Handler).Query", "github.com/prometheus/client_golang/prometheus/promhttp.InstrumentHandlerDuration.func1", "net/http.HandlerFunc.ServeHTTP"}, "github.com/prometheus/prometheus/web.(*Handler).Query", ""},
		{"its client library is not", nil, []string{"runtime.gopark", "sync.(*Mutex).Lock", "github.com/prometheus/client_golang/prometheus.(*Registry).Gather", "main.handle"}, "main.handle", "sync.(*Mutex).Lock"},
		{"router is infra by module path", nil, []string{"runtime.gopark", "github.com/go-chi/chi/v5.(*Mux).ServeHTTP", "github.com/go-chi/chitchat.Serve"}, "github.com/go-chi/chitchat.Serve", "github.com/go-chi/chi/v5.(*Mux).ServeHTTP"},
		{"agent is infra", nil, []string{"runtime.gopark", "github.com/latscope/latscope/agent.(*mw).ServeHTTP", "main.main"}, "main.main", "github.com/latscope/latscope/agent.(*mw).ServeHTTP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := DefaultRules
			r.App = tt.app
			got := r.Decide(tt.stack)
			if got.App != tt.wantApp || got.Mechanism != tt.wantMech {
				t.Errorf("Decide = {%q, %q}, want {%q, %q}", got.App, got.Mechanism, tt.wantApp, tt.wantMech)
			}
		})
	}
}

func TestDecideFiles(t *testing.T) {
	const cache = "/root/go/pkg/mod/"
	tests := []struct {
		name         string
		app          []string
		stack, files []string
		wantApp      string
		wantFallback bool
	}{
		{"a dependency's frame is not the service's", nil,
			[]string{"runtime.gopark", "github.com/oklog/run.(*Group).Run", "github.com/acme/svc/api.serve", "main.main"},
			[]string{"/usr/local/go/src/runtime/proc.go", cache + "github.com/oklog/run@v1.1.0/group.go", "/src/svc/api/serve.go", "/src/svc/main.go"},
			"github.com/acme/svc/api.serve", false},
		{"trimmed paths", nil,
			[]string{"runtime.gopark", "github.com/unknown/router.(*Mux).ServeHTTP", "github.com/acme/svc/api.Get"},
			[]string{"runtime/proc.go", "github.com/unknown/router@v0.0.0-20240101000000-abcdef/mux.go", "github.com/acme/svc/api/get.go"},
			"github.com/acme/svc/api.Get", false},
		{"vendored", nil,
			[]string{"runtime.gopark", "github.com/unknown/router.(*Mux).ServeHTTP", "main.handle"},
			[]string{"runtime/proc.go", "/src/svc/vendor/github.com/unknown/router/mux.go", "/src/svc/main.go"},
			"main.handle", false},
		{"a binary installed from the module cache falls back", nil,
			[]string{"runtime.gopark", "github.com/caddyserver/caddy/v2/modules/caddyhttp.(*Server).ServeHTTP"},
			[]string{"runtime/proc.go", cache + "github.com/caddyserver/caddy/v2@v2.8.4/modules/caddyhttp/server.go"},
			"github.com/caddyserver/caddy/v2/modules/caddyhttp.(*Server).ServeHTTP", true},
		{"--app wins", []string{"github.com/oklog/"},
			[]string{"runtime.gopark", "github.com/oklog/run.(*Group).Run", "main.main"},
			[]string{"runtime/proc.go", cache + "github.com/oklog/run@v1.1.0/group.go", "/src/svc/main.go"},
			"github.com/oklog/run.(*Group).Run", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := DefaultRules
			r.App = tt.app
			got := r.DecideFiles(tt.stack, tt.files)
			if got.App != tt.wantApp || got.Fallback != tt.wantFallback {
				t.Errorf("DecideFiles = %+v, want App %q Fallback %v", got, tt.wantApp, tt.wantFallback)
			}
		})
	}
}

// TestModule: with the main module known, the application is its packages
// and package main, wherever they were compiled from; a stack without one
// falls back to the innermost non-standard frame and says so.
func TestModule(t *testing.T) {
	const cache = "/root/go/pkg/mod/"
	tests := []struct {
		name         string
		module       string
		stack, files []string
		wantApp      string
		wantFallback bool
	}{
		{"installed from the module cache", "github.com/caddyserver/caddy/v2",
			[]string{"runtime.gopark", "github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.(*Handler).ServeHTTP", "github.com/caddyserver/caddy/v2/modules/caddyhttp.(*Server).ServeHTTP"},
			[]string{"runtime/proc.go", cache + "github.com/caddyserver/caddy/v2@v2.8.4/modules/caddyhttp/reverseproxy/reverseproxy.go", cache + "github.com/caddyserver/caddy/v2@v2.8.4/modules/caddyhttp/server.go"},
			"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.(*Handler).ServeHTTP", false},
		{"a distribution's build: a dependency without module versions", "github.com/prometheus/prometheus",
			[]string{"runtime.gopark", "go.opencensus.io/stats/view.(*worker).start", "github.com/prometheus/prometheus/web.(*Handler).query"},
			[]string{"runtime/proc.go", "/build/_build/src/go.opencensus.io/stats/view/worker.go", "/build/_build/src/github.com/prometheus/prometheus/web/api.go"},
			"github.com/prometheus/prometheus/web.(*Handler).query", false},
		{"package main is the module's", "github.com/acme/svc",
			[]string{"runtime.gopark", "github.com/other/lib.Do", "main.handle"},
			[]string{"runtime/proc.go", "/src/lib/do.go", "/src/svc/main.go"},
			"main.handle", false},
		{"no frame of the module: fallback", "github.com/acme/svc",
			[]string{"runtime.gopark", "github.com/other/lib.(*Pool).worker"},
			[]string{"runtime/proc.go", cache + "github.com/other/lib@v1.0.0/pool.go"},
			"github.com/other/lib.(*Pool).worker", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := DefaultRules
			r.Module = tt.module
			got := r.DecideFiles(tt.stack, tt.files)
			if got.App != tt.wantApp || got.Fallback != tt.wantFallback {
				t.Errorf("DecideFiles = %+v, want App %q Fallback %v", got, tt.wantApp, tt.wantFallback)
			}
		})
	}
}

func TestIsDependencyFile(t *testing.T) {
	for file, want := range map[string]bool{
		"/root/go/pkg/mod/github.com/jackc/pgx/v5@v5.13.0/conn.go":  true,
		"github.com/jackc/pgx/v5@v5.13.0/conn.go":                   true,
		"/root/go/pkg/mod/github.com/!burnt!sushi/toml@v1.3.2/x.go": true,
		"/src/app/vendor/github.com/x/y/z.go":                       true,
		"/work/main/budget/terms.go":                                false,
		"github.com/latscope/latscope/internal/budget/terms.go":     false,
		"/usr/local/go/src/net/http/server.go":                      false,
		"/home/me@vacation/src/app/main.go":                         false,
		"/home/me/src/app@v2/main.go":                               true, // looks like a version: a dependency
		"":                                                          false,
	} {
		if got := IsDependencyFile(file); got != want {
			t.Errorf("IsDependencyFile(%q) = %v, want %v", file, got, want)
		}
	}
}

func TestUnderPath(t *testing.T) {
	for _, tt := range []struct {
		pkg, prefix string
		want        bool
	}{
		{"github.com/go-chi/chi", "github.com/go-chi/chi", true},
		{"github.com/go-chi/chi/v5", "github.com/go-chi/chi", true},
		{"github.com/go-chi/chitchat", "github.com/go-chi/chi", false},
		{"github.com/prometheus/prometheus/web", "github.com/prometheus/client_golang", false},
		{"github.com/acme/x", "github.com/acme/", true},
		{"gorm.io/gorm", "gorm.io/gorm", true},
	} {
		if got := underPath(tt.pkg, tt.prefix); got != tt.want {
			t.Errorf("underPath(%q, %q) = %v, want %v", tt.pkg, tt.prefix, got, tt.want)
		}
	}
}

func TestPackage(t *testing.T) {
	for in, want := range map[string]string{
		"net/http.(*Transport).roundTrip":                 "net/http",
		"main.handle.func2.1":                             "main",
		"github.com/a/b.(*T).M":                           "github.com/a/b",
		"github.com/jackc/puddle/v2.(*Pool[...]).acquire": "github.com/jackc/puddle/v2",
		"runtime.gopark":                                  "runtime",
		"nodot":                                           "nodot",
	} {
		if got := Package(in); got != want {
			t.Errorf("Package(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKindOfReason(t *testing.T) {
	for reason, want := range map[string]Kind{"network": Network, "sync": Sync, "select": Select, "GC mark assist wait": GC, "brand new reason": Other} {
		if got := KindOfReason(reason); got != want {
			t.Errorf("KindOfReason(%q) = %v, want %v", reason, got, want)
		}
	}
	for k := Kind(0); k < numKinds; k++ {
		if got, ok := ParseKind(k.String()); !ok || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, ok)
		}
	}
}

// TestShortMajorVersion: a module path's major-version element is not a
// package name (issue #36: "v3.(*node).run" for etcd's raft).
func TestShortMajorVersion(t *testing.T) {
	for fn, want := range map[string]string{
		"go.etcd.io/raft/v3.(*node).run":                  "raft.(*node).run",
		"github.com/go-chi/chi/v5.(*Mux).ServeHTTP":       "chi.(*Mux).ServeHTTP",
		"github.com/jackc/pgx/v5/pgxpool.(*Pool).Acquire": "pgxpool.(*Pool).Acquire",
		"github.com/x/y/demo.callUpstream":                "demo.callUpstream",
		"example.com/v2.F":                                "v2.F", // a host's element: no package name before it
		"example.com/x/v1.F":                              "v1.F", // v1 is never a major-version suffix
		"main.handle.func2.1":                             "main.handle.func2.1",
		"net/http.(*persistConn).roundTrip":               "http.(*persistConn).roundTrip",
		"time.Sleep":                                      "time.Sleep",
	} {
		if got := Short(fn); got != want {
			t.Errorf("Short(%q) = %q, want %q", fn, got, want)
		}
	}
}

// TestModuleOfFile: the module of a file compiled from the module cache,
// with and without -trimpath, capitals unescaped; none for other files.
func TestModuleOfFile(t *testing.T) {
	for file, want := range map[string]string{
		"/root/go/pkg/mod/go.etcd.io/etcd/server/v3@v3.5.21/main.go":         "go.etcd.io/etcd/server/v3",
		"go.etcd.io/etcd/server/v3@v3.5.21/etcdmain/main.go":                 "go.etcd.io/etcd/server/v3",
		"/home/u/go/pkg/mod/github.com/!azure/azure-sdk@v1.2.3/sdk/a.go":     "github.com/Azure/azure-sdk",
		"/tmp/gp/pkg/mod/example.com/shop@v1.0.0-20240101000000-abcdef/m.go": "example.com/shop",
		"/src/shop/main.go":                       "",
		"/src/shop/vendor/github.com/x/y/y.go":    "",
		"/usr/local/go/src/net/http/transport.go": "",
	} {
		got, ok := ModuleOfFile(file)
		if got != want || ok != (want != "") {
			t.Errorf("ModuleOfFile(%q) = %q, %v; want %q", file, got, ok, want)
		}
	}
}
