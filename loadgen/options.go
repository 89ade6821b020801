package loadgen

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Options configures a load run. Start from DefaultOptions and set URL.
type Options struct {
	// URL is the target; its scheme must be http or https.
	URL string
	// Method is the HTTP method; empty means GET.
	Method string
	// Body is sent with every request; nil sends none.
	Body []byte
	// Header is added to every request. A "Host" entry sets the request's Host.
	Header http.Header

	// Clients is the number of concurrent clients of the closed model. It is
	// not used by the open model.
	Clients int
	// Rate selects the model: 0 is the closed model, a positive value is the
	// open model with that many requests per second.
	Rate float64
	// Pacer, if set, replaces the model's own pacer: ClosedPacer{Think} in
	// the closed model, ConstantPacer{Rate} in the open model. The model is
	// still chosen by Rate.
	Pacer Pacer

	// Duration is the length of the measured part of the run, after Warmup.
	Duration time.Duration
	// Warmup is the length of the warm-up before it; 0 means none.
	Warmup time.Duration
	// Timeout bounds each request from its send to the end of its body; 0
	// means no bound.
	Timeout time.Duration
	// Think is the closed model's pause between an answer and the client's
	// next request.
	Think time.Duration
	// MaxInFlight bounds the open model's outstanding requests.
	MaxInFlight int

	// Client sends the requests. If nil, Run builds one whose single
	// transport keeps an idle keep-alive connection for every concurrent
	// request and closes them when the run ends.
	Client *http.Client
}

// DefaultOptions are the defaults of a run; the command's flags start here.
var DefaultOptions = Options{
	Method:      http.MethodGet,
	Clients:     10,
	Duration:    10 * time.Second,
	Warmup:      2 * time.Second,
	Timeout:     30 * time.Second,
	MaxInFlight: 1000,
}

// Open reports whether o selects the open model.
func (o Options) Open() bool { return o.Rate > 0 }

// Concurrency is the most requests o can have outstanding at once.
func (o Options) Concurrency() int {
	if o.Open() {
		return o.MaxInFlight
	}
	return o.Clients
}

// Validate checks o and names the first bad field.
func (o Options) Validate() error {
	if err := ValidateURL(o.URL); err != nil {
		return fmt.Errorf("loadgen: URL: %w", err)
	}
	if _, err := http.NewRequest(o.Method, o.URL, nil); err != nil {
		return fmt.Errorf("loadgen: Method %q: %w", o.Method, err)
	}
	checks := []struct {
		bad  bool
		name string
		want string
		got  any
	}{
		{math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Rate < 0, "Rate", "a finite rate ≥ 0", o.Rate},
		{!o.Open() && o.Clients < 1, "Clients", "at least 1", o.Clients},
		{o.Open() && o.MaxInFlight < 1, "MaxInFlight", "at least 1", o.MaxInFlight},
		{o.Duration <= 0, "Duration", "more than 0", o.Duration},
		{o.Warmup < 0, "Warmup", "at least 0", o.Warmup},
		{o.Timeout < 0, "Timeout", "at least 0", o.Timeout},
		{o.Think < 0, "Think", "at least 0", o.Think},
	}
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("loadgen: %s = %v, want %s", c.name, c.got, c.want)
		}
	}
	return nil
}

// ValidateURL checks that s is an absolute http or https URL with a host.
func ValidateURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme must be http or https", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q: no host", s)
	}
	return nil
}

// pacer returns the pacer the run uses.
func (o Options) pacer() Pacer {
	switch {
	case o.Pacer != nil:
		return o.Pacer
	case o.Open():
		return ConstantPacer{Rate: o.Rate}
	default:
		return ClosedPacer{Think: o.Think}
	}
}

// httpClient returns the client of the run and a function to call when the
// run is over.
func (o Options) httpClient() (*http.Client, func()) {
	if o.Client != nil {
		return o.Client, func() {}
	}
	n := o.Concurrency()
	t := &http.Transport{
		Proxy:               nil, // load goes straight to the target
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        n,
		MaxIdleConnsPerHost: n,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{Transport: t}, t.CloseIdleConnections
}
