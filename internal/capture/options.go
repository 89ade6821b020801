package capture

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/httpurl"
)

// Options configures a capture. Start from DefaultOptions and set URL.
type Options struct {
	// URL is the service's base URL; the capture fetches URL/debug/pprof/...
	// and URL/metrics.
	URL string
	// Seconds is the length of the trace and profile (whole seconds: that is
	// what /debug/pprof/profile accepts).
	Seconds int
	// Token, when set, is sent as "Authorization: Bearer TOKEN".
	Token string
	// NoProfile skips the CPU profile (the trace then has no CPU samples).
	NoProfile bool
	// Timeout bounds the whole capture; 0 means Seconds + 10 s.
	Timeout time.Duration
	// Client sends the requests; nil means a client without proxies.
	Client *http.Client
}

// DefaultOptions are the defaults of a capture.
var DefaultOptions = Options{Seconds: 5}

// Validate checks o and names the first bad field.
func (o Options) Validate() error {
	u, err := httpurl.Parse(o.URL)
	switch {
	case err != nil:
		return fmt.Errorf("capture: URL %q: %w", httpurl.Redact(o.URL), err)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("capture: URL %q: want the service's base URL, without a query", httpurl.Redact(o.URL))
	case o.Seconds < 1 || o.Seconds > 3600:
		return fmt.Errorf("capture: seconds %d: want 1 to 3600", o.Seconds)
	case o.Timeout < 0:
		return fmt.Errorf("capture: timeout %v: must not be negative", o.Timeout)
	}
	return nil
}

// timeout is the bound of the whole capture.
func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return time.Duration(o.Seconds)*time.Second + 10*time.Second
}

// endpoint returns the URL of path under the base URL.
func (o Options) endpoint(path string) string {
	return strings.TrimRight(o.URL, "/") + path
}

// client returns the HTTP client of the capture.
func (o Options) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return &http.Client{Transport: &http.Transport{Proxy: nil}} // captures go straight to the service
}
