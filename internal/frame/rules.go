package frame

import "strings"

// Rules decide the application frame and the mechanism of a stack.
// The zero value is not useful; start from DefaultRules.
type Rules struct {
	// App, when non-empty, lists package-path prefixes that are the user's
	// code; only frames in them can be application frames (--app PREFIX).
	App []string
	// Module, when non-empty (and App is empty), is the service's main
	// module path (from the agent's trace log, or capture): the application
	// is package main and the packages of that module, whoever wrote them
	// and wherever they were compiled from, less the Infra libraries.
	Module string
	// ModuleFromMain says Module was not given or logged but found from the
	// trace: the module cache's module that holds package main's source
	// (a binary installed with `go install module@version`).
	ModuleFromMain bool
	// Infra lists the module paths of infrastructure libraries (drivers,
	// routers, RPC, telemetry, latscope's own agent) whose packages are never
	// application frames: a path matches itself and the packages below it.
	Infra []string
	// Machinery lists function-name prefixes that are never mechanisms: the
	// runtime and the internals beneath the standard library's blocking APIs.
	Machinery []string
}

// DefaultRules are the built-in rules.
var DefaultRules = Rules{
	// Libraries, by module path, never a whole organisation's namespace:
	// a service written by that organisation (github.com/prometheus/prometheus,
	// say) is still the application.
	Infra: []string{
		// the Go project's extra libraries
		"golang.org/x/net", "golang.org/x/sync", "golang.org/x/crypto", "golang.org/x/time",
		"golang.org/x/oauth2", "golang.org/x/sys", "golang.org/x/text",
		// SQL, key-value and message-queue clients and drivers
		"github.com/jackc/pgx", "github.com/jackc/pgconn", "github.com/jackc/pgproto3",
		"github.com/jackc/pgtype", "github.com/jackc/puddle", "github.com/lib/pq",
		"github.com/go-sql-driver/mysql", "github.com/mattn/go-sqlite3", "modernc.org/sqlite",
		"github.com/jmoiron/sqlx", "gorm.io/gorm", "gorm.io/driver", "github.com/uptrace/bun",
		"github.com/redis/go-redis", "github.com/go-redis/redis", "github.com/gomodule/redigo",
		"github.com/bradfitz/gomemcache", "go.mongodb.org/mongo-driver",
		"github.com/segmentio/kafka-go", "github.com/IBM/sarama", "github.com/Shopify/sarama",
		"github.com/nats-io/nats.go", "github.com/rabbitmq/amqp091-go",
		"github.com/elastic/go-elasticsearch", "github.com/aws/aws-sdk-go", "github.com/aws/aws-sdk-go-v2",
		// RPC and serialisation
		"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/golang/protobuf",
		"github.com/gogo/protobuf", "github.com/grpc-ecosystem/grpc-gateway",
		"github.com/json-iterator/go", "github.com/goccy/go-json", "github.com/klauspost/compress",
		"github.com/andybalholm/brotli",
		// telemetry and logging
		"go.opentelemetry.io/otel", "go.opentelemetry.io/contrib",
		"github.com/prometheus/client_golang", "github.com/prometheus/common",
		"github.com/prometheus/procfs", "github.com/prometheus/client_model",
		"go.uber.org/zap", "github.com/sirupsen/logrus", "github.com/rs/zerolog",
		// routers and HTTP servers
		"github.com/gin-gonic/gin", "github.com/labstack/echo", "github.com/go-chi/chi",
		"github.com/gorilla/mux", "github.com/gorilla/handlers", "github.com/gorilla/websocket",
		"github.com/julienschmidt/httprouter", "github.com/gofiber/fiber",
		"github.com/valyala/fasthttp", "github.com/quic-go/quic-go",
		// latscope's own agent
		"github.com/latscope/latscope/agent",
	},
	Machinery: []string{
		"runtime.",
		"internal/",
		"sync.runtime_",
		"golang.org/x/sync/semaphore.",
		"github.com/jackc/puddle/",
	},
}

// Attribution is the outcome of Rules.Decide.
type Attribution struct {
	App       string // innermost application frame; "" when the stack has none
	Mechanism string // innermost non-machinery frame; "" when none
	// Fallback is set when no frame of the stack was compiled from the
	// service's own source and App was chosen by function name alone from
	// frames built from the module cache (see DecideFiles).
	Fallback bool
}

// Decide attributes a stack given as function names, leaf first.
func (r *Rules) Decide(funcs []string) Attribution {
	return r.decide(funcs, func(i int) bool { return r.IsApp(funcs[i]) })
}

// DecideFiles attributes a stack given as function names and their source
// files, leaf first. Unless App is set, a frame compiled from a dependency
// — a file in the module cache or a vendor directory (IsDependencyFile) —
// is not the application: the application is the code the service was
// built from. When no frame of the stack qualifies (a binary installed from
// the module cache, whose own code is there too), it falls back to Decide
// and sets Fallback.
func (r *Rules) DecideFiles(funcs, files []string) Attribution {
	if len(r.App) > 0 || len(files) != len(funcs) {
		return r.Decide(funcs)
	}
	if r.Module != "" { // the module says it; files do not matter
		a := r.Decide(funcs)
		if a.App == "" { // no frame of the module: the innermost non-standard one, said so
			wide := *r
			wide.Module = ""
			a = wide.Decide(funcs)
			a.Fallback = a.App != ""
		}
		return a
	}
	a := r.decide(funcs, func(i int) bool { return r.IsAppFrame(funcs[i], files[i], false) })
	if a.App == "" {
		a = r.Decide(funcs)
		a.Fallback = a.App != ""
	}
	return a
}

// IsAppFrame reports whether a frame is the user's code under the rule
// DecideFiles applied: by function and file, or by function alone when
// the stack's attribution fell back.
func (r *Rules) IsAppFrame(fn, file string, fallback bool) bool {
	if fallback && r.Module != "" && len(r.App) == 0 {
		wide := *r
		wide.Module = ""
		return wide.IsApp(fn)
	}
	if !r.IsApp(fn) {
		return false
	}
	return len(r.App) > 0 || r.Module != "" || fallback || !IsDependencyFile(file)
}

func (r *Rules) decide(funcs []string, isApp func(i int) bool) Attribution {
	var a Attribution
	for i, fn := range funcs {
		if a.Mechanism == "" && !r.isMachinery(fn) {
			a.Mechanism = fn
		}
		if isApp(i) {
			a.App = fn
			break
		}
	}
	if a.Mechanism == a.App {
		a.Mechanism = ""
	}
	return a
}

// IsDependencyFile reports whether a source file was compiled from the
// module cache or a vendor directory: a path element "module@vX…"
// (".../pkg/mod/github.com/x/y@v1.2.3/z.go", or with -trimpath
// "github.com/x/y@v1.2.3/z.go") or an element "vendor".
func IsDependencyFile(file string) bool {
	for _, el := range strings.Split(file, "/") {
		if el == "vendor" {
			return true
		}
		if i := strings.Index(el, "@v"); i > 0 && i+2 < len(el) && el[i+2] >= '0' && el[i+2] <= '9' {
			return true
		}
	}
	return false
}

// ModuleOfFile returns the module path of a source file compiled from the
// module cache — "…/pkg/mod/go.etcd.io/etcd/server/v3@v3.5.21/main.go", or
// with -trimpath "go.etcd.io/etcd/server/v3@v3.5.21/main.go", gives
// "go.etcd.io/etcd/server/v3" — and false for any other file. The cache's
// escaping of capitals ("!azure" for "Azure") is undone.
func ModuleOfFile(file string) (string, bool) {
	els := strings.Split(file, "/")
	for i, el := range els {
		at := strings.Index(el, "@v")
		if at <= 0 || at+2 >= len(el) || el[at+2] < '0' || el[at+2] > '9' {
			continue
		}
		from := 0
		for j := i - 1; j >= 1; j-- {
			if els[j] == "mod" && els[j-1] == "pkg" {
				from = j + 1
				break
			}
		}
		path := strings.Join(append(els[from:i:i], el[:at]), "/")
		path = strings.TrimPrefix(path, "/")
		if path == "" || !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && !strings.Contains(path, "/") {
			return "", false
		}
		var b strings.Builder
		for k := 0; k < len(path); k++ {
			if path[k] == '!' && k+1 < len(path) && path[k+1] >= 'a' && path[k+1] <= 'z' {
				b.WriteByte(path[k+1] - 'a' + 'A')
				k++
				continue
			}
			b.WriteByte(path[k])
		}
		return b.String(), true
	}
	return "", false
}

// IsApp reports whether fn (a fully qualified function name) is the user's code.
func (r *Rules) IsApp(fn string) bool {
	pkg := Package(fn)
	if len(r.App) > 0 {
		for _, p := range r.App {
			if strings.HasPrefix(pkg, p) || strings.HasPrefix(fn, p) {
				return true
			}
		}
		return false
	}
	if pkg == "main" {
		return true
	}
	if IsStd(pkg) {
		return false
	}
	for _, p := range r.Infra {
		if underPath(pkg, p) {
			return false
		}
	}
	return r.Module == "" || underPath(pkg, r.Module)
}

// underPath reports whether package path pkg is prefix itself or below it
// (element by element: "github.com/go-chi/chi" covers ".../chi/v5" but not
// ".../chitchat"). A prefix that ends in "/" or "." matches as a plain prefix.
func underPath(pkg, prefix string) bool {
	if !strings.HasPrefix(pkg, prefix) {
		return false
	}
	if len(pkg) == len(prefix) {
		return true
	}
	last := prefix[len(prefix)-1]
	return last == '/' || last == '.' || pkg[len(prefix)] == '/'
}

func (r *Rules) isMachinery(fn string) bool {
	for _, p := range r.Machinery {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// Package returns the package path of a fully qualified function name such
// as "net/http.(*Transport).roundTrip" or "main.handle.func2.1".
func Package(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// IsStd reports whether a package path belongs to the standard library:
// its first element has no dot (and it is not main).
func IsStd(pkg string) bool {
	if pkg == "main" {
		return false
	}
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

// Short returns fn without its package path's directories, for display:
// "github.com/x/y/demo.callUpstream" → "demo.callUpstream". A module
// path's major-version element is not a package name: the package is named
// by the element before it ("go.etcd.io/raft/v3.(*node).run" →
// "raft.(*node).run").
func Short(fn string) string {
	pkg := Package(fn)
	rest := fn[len(pkg):]
	els := strings.Split(pkg, "/")
	name := els[len(els)-1]
	if isMajor(name) && len(els) > 2 { // not a host's: "example.com/v2" keeps "v2"
		name = els[len(els)-2]
	}
	return name + rest
}

// isMajor reports whether a path element is a major-version suffix: "v2",
// "v3", … (v0 and v1 never are).
func isMajor(el string) bool {
	if len(el) < 2 || el[0] != 'v' || el[1] == '0' || el == "v1" {
		return false
	}
	for _, c := range el[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
