package loadgen

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/httpurl"
)

// Options configures a load run. Start from DefaultOptions and set URL.
type Options struct {
	// URL is the target; its scheme must be http or https.
	URL string
	// Method is the HTTP method; empty means GET.
	Method string
	// Body is sent with every request; nil sends none.
	Body []byte
	// Header is added to every request. A "Host" entry sets the request's
	// Host. Names must be tokens and values free of control characters.
	Header http.Header

	// Clients is the number of concurrent clients of the closed model, 1 to
	// MaxClients. The open model does not use it; Validate checks it anyway.
	Clients int
	// Rate selects the model: 0 is the closed model, a positive value (at
	// most MaxRate) is the open model with that many requests per second.
	Rate float64
	// Pacer, if set, replaces the model's own pacer: ClosedPacer{Think} in
	// the closed model, ConstantPacer{Rate} in the open model. The model is
	// still chosen by Rate.
	Pacer Pacer

	// Duration is the length of the measured part of the run, after Warmup;
	// more than 0.
	Duration time.Duration
	// Warmup is the length of the warm-up before it; 0 means none.
	Warmup time.Duration
	// Timeout bounds each request from its send to the end of its body; 0
	// means no bound.
	Timeout time.Duration
	// Think is the closed model's pause between an answer and the client's
	// next request.
	Think time.Duration
	// MaxInFlight bounds the open model's outstanding requests, 1 to
	// MaxInFlightLimit. The closed model does not use it; Validate checks it
	// anyway.
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

// Bounds of the numeric options; Validate refuses values outside them.
const (
	// MaxClients is the most closed-model clients: each is a goroutine and
	// a connection.
	MaxClients = 100_000
	// MaxInFlightLimit is the largest Options.MaxInFlight.
	MaxInFlightLimit = 1_000_000
	// MaxRate is the highest open-model rate: one request per nanosecond.
	MaxRate = 1e9
)

// An OptionError is Validate's refusal of one field of Options.
type OptionError struct {
	Option string // the field: "URL", "Method", "Header", "Clients", "Rate", …
	Value  string // the refused value as text; strings are quoted
	Reason string // what is wrong or what is wanted
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("loadgen: %s %s: %s", e.Option, e.Value, e.Reason)
}

// Validate checks every field of o and returns an *OptionError naming the
// first bad one. Every field is checked whichever model Rate selects, so a
// value that can never be valid is refused even where it is not used.
func (o Options) Validate() error {
	bad := func(option, value, format string, args ...any) error {
		return &OptionError{Option: option, Value: value, Reason: fmt.Sprintf(format, args...)}
	}
	if err := httpurl.Check(o.URL); err != nil {
		return bad("URL", strconv.Quote(o.URL), "%v", err)
	}
	if _, err := http.NewRequest(o.Method, o.URL, nil); err != nil {
		return bad("Method", strconv.Quote(o.Method), "not an HTTP method (a token such as GET or POST)")
	}
	if err := validateHeader(o.Header); err != nil {
		return err
	}
	dur := func(d time.Duration) string { return d.String() }
	checks := []struct {
		bad         bool
		option, got string
		want        string
	}{
		{math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Rate < 0 || o.Rate > MaxRate,
			"Rate", strconv.FormatFloat(o.Rate, 'g', -1, 64), fmt.Sprintf("want a number from 0 (closed model) to %g requests per second", float64(MaxRate))},
		{o.Clients < 1 || o.Clients > MaxClients, "Clients", strconv.Itoa(o.Clients), fmt.Sprintf("want 1 to %d", MaxClients)},
		{o.MaxInFlight < 1 || o.MaxInFlight > MaxInFlightLimit, "MaxInFlight", strconv.Itoa(o.MaxInFlight), fmt.Sprintf("want 1 to %d", MaxInFlightLimit)},
		{o.Duration <= 0, "Duration", dur(o.Duration), "want more than 0"},
		{o.Warmup < 0, "Warmup", dur(o.Warmup), "want 0 or more"},
		{o.Duration > never-max(o.Warmup, 0), "Duration", dur(o.Duration), fmt.Sprintf("Warmup + Duration exceeds %v", never)},
		{o.Timeout < 0, "Timeout", dur(o.Timeout), "want 0 (none) or more"},
		{o.Think < 0, "Think", dur(o.Think), "want 0 or more"},
	}
	for _, c := range checks {
		if c.bad {
			return bad(c.option, c.got, "%s", c.want)
		}
	}
	return nil
}

// validateHeader refuses what net/http would refuse on every request: a
// name that is not a token, a value with a control character (CR and LF
// above all: they would split the header).
func validateHeader(h http.Header) error {
	for name, values := range h {
		if name == "" || strings.ContainsFunc(name, notTokenChar) {
			return &OptionError{Option: "Header", Value: strconv.Quote(name), Reason: "the name is not a token (letters, digits, !#$%&'*+-.^_`|~)"}
		}
		for _, v := range values {
			if i := strings.IndexFunc(v, isCTL); i >= 0 {
				return &OptionError{Option: "Header", Value: strconv.Quote(name + ": " + v),
					Reason: fmt.Sprintf("the value holds the control character %U (CR, LF and other controls would corrupt the request)", v[i])}
			}
		}
	}
	return nil
}

// notTokenChar reports a character not allowed in a header name (RFC 9110 token).
func notTokenChar(c rune) bool {
	return c <= ' ' || c >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c)
}

// isCTL reports a control character other than horizontal tab, which RFC
// 9110 does not allow in a field value.
func isCTL(c rune) bool { return c < ' ' && c != '\t' || c == 0x7f }

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
