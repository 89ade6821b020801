package frame

import "strings"

// Rules decide the application frame and the mechanism of a stack.
// The zero value is not useful; start from DefaultRules.
type Rules struct {
	// App, when non-empty, lists package-path prefixes that are the user's
	// code; only frames in them can be application frames (--app PREFIX).
	App []string
	// Infra lists package-path prefixes of infrastructure modules (drivers,
	// routers, RPC, latscope's own agent) that are never application frames.
	Infra []string
	// Machinery lists function-name prefixes that are never mechanisms: the
	// runtime and the internals beneath the standard library's blocking APIs.
	Machinery []string
}

// DefaultRules are the built-in rules.
var DefaultRules = Rules{
	Infra: []string{
		"golang.org/x/",
		"github.com/jackc/",
		"github.com/lib/pq",
		"github.com/go-sql-driver/",
		"github.com/mattn/go-sqlite3",
		"github.com/redis/go-redis",
		"github.com/go-redis/",
		"google.golang.org/grpc",
		"google.golang.org/protobuf",
		"go.opentelemetry.io/",
		"github.com/prometheus/",
		"github.com/gin-gonic/gin",
		"github.com/labstack/echo",
		"github.com/go-chi/chi",
		"github.com/gorilla/",
		"github.com/valyala/fasthttp",
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
}

// Decide attributes a stack given as function names, leaf first.
func (r *Rules) Decide(funcs []string) Attribution {
	var a Attribution
	for _, fn := range funcs {
		if a.Mechanism == "" && !r.isMachinery(fn) {
			a.Mechanism = fn
		}
		if r.IsApp(fn) {
			a.App = fn
			break
		}
	}
	if a.Mechanism == a.App {
		a.Mechanism = ""
	}
	return a
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
		if strings.HasPrefix(pkg, p) || pkg+"/" == p {
			return false
		}
	}
	return true
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
// "github.com/x/y/demo.callUpstream" → "demo.callUpstream".
func Short(fn string) string {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}
