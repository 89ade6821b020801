package agent

import (
	"sync"
	"sync/atomic"
)

// maxRouteNames bounds the cache of RouteName: past it, a new name is made
// per request (one allocation), and Options.MaxRoutes puts it under
// OtherRoute anyway.
const maxRouteNames = 4096

// routeNames caches the names RouteName made, so that a known route costs
// a map read and no allocation. The map is copied on write and never
// changed once published.
var routeNames struct {
	m  atomic.Pointer[map[string]string]
	mu sync.Mutex
}

// RouteName is the route of a request with method that a router matched
// to pattern: method + " " + pattern, as a ServeMux pattern with a method
// reads ("GET /users/{id}", "GET /users/:id"); NoRoute when pattern is
// empty (no route matched). Router adapters name requests with it. A name
// made once is cached, so a request of a known route allocates nothing.
func RouteName(method, pattern string) string {
	if pattern == "" {
		return NoRoute
	}
	var buf [256]byte
	key := append(append(append(buf[:0], method...), ' '), pattern...)
	if m := routeNames.m.Load(); m != nil {
		if name, ok := (*m)[string(key)]; ok { // string(key) does not allocate here
			return name
		}
	}
	name := string(key)
	routeNames.mu.Lock()
	defer routeNames.mu.Unlock()
	old := routeNames.m.Load()
	if old != nil && len(*old) >= maxRouteNames {
		return name
	}
	m := make(map[string]string, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[name] = name
	routeNames.m.Store(&m)
	return name
}

func lenOf(m *map[string]string) int {
	if m == nil {
		return 0
	}
	return len(*m)
}
