package agent

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// OtherRoute is the route of the requests beyond Options.MaxRoutes.
const OtherRoute = "(other)"

// routeSet caps the distinct routes of an agent (Options.MaxRoutes): the
// first max routes are admitted under their own names, every later one
// becomes OtherRoute. A Route hook that returns paths would otherwise
// make per-route state (metric series, the recorder's latency windows)
// grow with every path. Admitting a known route is one sync.Map read, with
// no lock and no allocation.
type routeSet struct {
	max   int64
	known sync.Map     // route → struct{}
	n     atomic.Int64 // routes in known
	mu    sync.Mutex   // serialises additions

	over   func()      // counts a request turned to OtherRoute; nil without metrics
	warned atomic.Bool // the one line on warn was written
	warn   io.Writer   // where that line goes (standard error)
}

func newRouteSet(max int, over func(), warn io.Writer) *routeSet {
	return &routeSet{max: int64(max), over: over, warn: warn}
}

// admit returns route when it is known or there is room for it, and
// OtherRoute otherwise.
func (s *routeSet) admit(route string) string {
	if _, ok := s.known.Load(route); ok {
		return route
	}
	if s.n.Load() < s.max {
		s.mu.Lock()
		if _, ok := s.known.Load(route); ok {
			s.mu.Unlock()
			return route
		}
		if s.n.Load() < s.max {
			s.known.Store(route, struct{}{})
			s.n.Add(1)
			s.mu.Unlock()
			return route
		}
		s.mu.Unlock()
	}
	s.overflow(route)
	return OtherRoute
}

// overflow counts a request of route turned to OtherRoute, and says so on
// s.warn the first time.
func (s *routeSet) overflow(route string) {
	if s.over != nil {
		s.over()
	}
	if !s.warned.Swap(true) && s.warn != nil {
		fmt.Fprintf(s.warn, "latscope agent: %d distinct routes (Options.MaxRoutes) reached; requests of new routes, such as %.200q, are counted under route %q from now on. Options.Route must return a route, not a path.\n",
			s.max, route, OtherRoute)
	}
}
