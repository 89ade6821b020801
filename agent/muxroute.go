package agent

import (
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
)

// serveRouted serves r with h, the handler mux.Handler chose for r under
// pattern, as ServeMux.ServeHTTP would, so that a request Handler named by
// its mux's pattern costs one search of the mux instead of two. It reports
// false, having done nothing, when only ServeHTTP can serve r exactly: when
// the pattern has wildcards (their values reach the handler only through
// the mux; Request.SetPathValue would cost a map per request, more than the
// search it saves), for the "*" request URI, and under Go 1.21's mux rules.
//
// The second search was about half of the agent's own CPU per request at
// 5,000 requests/s (docs/agent.md, "Overhead").
func serveRouted(w http.ResponseWriter, r *http.Request, h http.Handler, pattern string) bool {
	if hasWildcard(pattern) || r.RequestURI == "*" || muxGo121() {
		return false
	}
	r.Pattern = pattern
	h.ServeHTTP(w, r)
	return true
}

// hasWildcard reports whether a ServeMux pattern has a wildcard that takes
// a value: a "{" in a pattern opens one, except the end anchor "{$}".
func hasWildcard(pattern string) bool {
	return strings.IndexByte(strings.TrimSuffix(pattern, "{$}"), '{') >= 0
}

// muxGo121 reports whether the ServeMux runs with Go 1.21's rules
// (GODEBUG httpmuxgo121=1, from the environment or the main module's go.mod):
// its ServeHTTP sets no r.Pattern, so Handler leaves serving to the mux.
var muxGo121 = sync.OnceValue(func() bool {
	settings := os.Getenv("GODEBUG")
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "DefaultGODEBUG" {
				settings = s.Value + "," + settings // the environment wins: it comes last
			}
		}
	}
	on := false
	for _, kv := range strings.Split(settings, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "httpmuxgo121="); ok {
			on = v == "1"
		}
	}
	return on
})
