package agent

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EndpointsPrefix is the path under which Endpoints serves.
const EndpointsPrefix = "/debug/latscope/"

// MaxTraceSeconds bounds an on-demand trace.
const MaxTraceSeconds = 300

// TraceStopTrailer is the HTTP trailer of an on-demand trace that says why
// it stopped: "seconds", "MaxTraceBytes (N bytes) reached after D" or
// "client gone".
const TraceStopTrailer = "Latscope-Trace-Stop"

// ErrNoRecorder is returned by Snapshot when the agent runs without one.
var ErrNoRecorder = errors.New("agent: the flight recorder is off (Options.NoRecorder)")

// Endpoints returns the agent's HTTP handler. Mount it on a loopback
// listener (Options.Listen does that) or behind authentication: traces show
// function names, routes and logged values. With Options.Token set, every
// request needs "Authorization: Bearer TOKEN".
//
//	GET  /debug/latscope/snapshots        the snapshots, JSON, oldest first
//	GET  /debug/latscope/snapshots/NAME   one snapshot
//	POST /debug/latscope/snapshot         take a snapshot now; answers its name
//	GET  /debug/latscope/flight           the flight recorder's window now
//	GET  /debug/latscope/trace?seconds=N  a new trace of the next N seconds (default 5)
//
// Only regular files that the process owns, with one link and a snapshot's
// name, are listed and served (see docs/security.md); without the flight
// recorder nothing is. POST snapshot and GET flight share a rate limit
// (Options.ManualInterval, ManualBurst; 429 with Retry-After beyond it), and
// an on-demand trace stops at Options.MaxTraceBytes (TraceStopTrailer says
// why it stopped).
func (a *Agent) Endpoints() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+EndpointsPrefix+"{$}", a.serveIndex)
	mux.HandleFunc("GET "+EndpointsPrefix+"snapshots", a.serveList)
	mux.HandleFunc("GET "+EndpointsPrefix+"snapshots/{name}", a.serveSnapshot)
	mux.HandleFunc("POST "+EndpointsPrefix+"snapshot", a.serveTake)
	mux.HandleFunc("GET "+EndpointsPrefix+"flight", a.serveFlight)
	mux.HandleFunc("GET "+EndpointsPrefix+"trace", a.serveTrace)
	if a.opts.Token == "" {
		return mux
	}
	return bearer(a.opts.Token, mux)
}

// bearer requires "Authorization: Bearer token". The scheme is
// case-insensitive (RFC 7235 §2.1: "bearer", "BEARER") and may be followed
// by more than one space; the token is compared in constant time.
func bearer(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(bearerToken(r.Header.Get("Authorization"))), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="latscope"`)
			http.Error(w, "latscope agent: missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme (in any case), or "" for any other header.
func bearerToken(h string) string {
	const scheme = "Bearer"
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) || h[len(scheme)] != ' ' {
		return ""
	}
	return strings.TrimLeft(h[len(scheme):], " ")
}

const indexText = `latscope agent endpoints (traces contain function names and logged values):
  GET  %[1]ssnapshots        list of snapshots (JSON)
  GET  %[1]ssnapshots/NAME   one snapshot (latscope analyze FILE)
  POST %[1]ssnapshot         take a snapshot now
  GET  %[1]sflight           the flight recorder's current window
  GET  %[1]strace?seconds=N  trace the next N seconds
`

func (a *Agent) serveIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, indexText, EndpointsPrefix)
}

func (a *Agent) serveList(w http.ResponseWriter, _ *http.Request) {
	files := []SnapshotFile{}
	if a.rec != nil {
		var err error
		if files, err = a.rec.dir.list(); err != nil {
			http.Error(w, "latscope agent: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if files == nil {
			files = []SnapshotFile{}
		}
	}
	writeJSON(w, files)
}

// serveSnapshot serves one snapshot, opened by snapDir.open: a name that is
// not one of the agent's own files is a 404, whatever it points to.
func (a *Agent) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if a.rec == nil || !isSnapshotName(name) {
		http.Error(w, "latscope agent: no such snapshot", http.StatusNotFound)
		return
	}
	f, info, err := a.rec.dir.open(name)
	if err != nil {
		http.Error(w, "latscope agent: no such snapshot", http.StatusNotFound)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	http.ServeContent(w, r, name, info.ModTime(), f)
}

// limited answers 429 with Retry-After, and reports true, when the manual
// snapshot bucket is empty.
func (a *Agent) limited(w http.ResponseWriter) bool {
	wait := a.manual.take(time.Now())
	if wait <= 0 {
		return false
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	http.Error(w, fmt.Sprintf("latscope agent: at most %d window copies (snapshot, flight) per %v, then one per %v; retry in %d s",
		a.opts.ManualBurst, time.Duration(a.opts.ManualBurst)*a.opts.ManualInterval, a.opts.ManualInterval, secs), http.StatusTooManyRequests)
	return true
}

func (a *Agent) serveTake(w http.ResponseWriter, _ *http.Request) {
	if a.rec == nil {
		http.Error(w, ErrNoRecorder.Error(), http.StatusNotFound)
		return
	}
	if a.limited(w) {
		return
	}
	path, err := a.Snapshot()
	switch {
	case errors.Is(err, ErrBusy):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case err != nil && path == "":
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		writeJSON(w, map[string]string{"name": filepath.Base(path)})
	}
}

// serveFlight streams the flight recorder's window.
func (a *Agent) serveFlight(w http.ResponseWriter, _ *http.Request) {
	if a.rec == nil {
		http.Error(w, ErrNoRecorder.Error(), http.StatusNotFound)
		return
	}
	if a.limited(w) {
		return
	}
	if !a.rec.busy.CompareAndSwap(false, true) {
		http.Error(w, ErrBusy.Error(), http.StatusServiceUnavailable)
		return
	}
	defer a.rec.busy.Store(false)
	a.sample.log()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="flight.trace"`)
	a.rec.fr.WriteTo(w) // the response is committed: a failure can only cut it
}

// serveTrace traces the next seconds=N seconds into the response, with the
// CPU counter and host samples at its start, during it and at its end. It
// stops early at MaxTraceBytes, or when the client goes away, and says why
// in the TraceStopTrailer trailer.
func (a *Agent) serveTrace(w http.ResponseWriter, r *http.Request) {
	secs, err := parseSeconds(r.FormValue("seconds"))
	if err != nil {
		http.Error(w, "latscope agent: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="trace.out"`)
	w.Header().Set("Trailer", TraceStopTrailer)
	cw := &capWriter{w: w, limit: a.opts.MaxTraceBytes, full: make(chan struct{})}
	if err := trace.Start(cw); err != nil {
		w.Header().Del("Content-Disposition")
		w.Header().Del("Trailer")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		http.Error(w, "latscope agent: cannot start a trace (another one is running?): "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	start := time.Now()
	a.sample.traceStarted() // the module first: a new trace must name it
	a.sample.log()
	var tick <-chan time.Time
	if a.rec == nil { // else the recorder's own loop is sampling already
		t := time.NewTicker(a.opts.SampleInterval)
		defer t.Stop()
		tick = t.C
	}
	end := time.NewTimer(secs)
	defer end.Stop()
	why := ""
	for why == "" {
		select {
		case <-r.Context().Done():
			why = "client gone"
		case <-end.C:
			why = "seconds"
		case <-cw.full:
			why = fmt.Sprintf("MaxTraceBytes (%d bytes) reached after %v", a.opts.MaxTraceBytes, time.Since(start).Round(time.Millisecond))
		case <-tick:
			a.sample.log()
		}
	}
	a.sample.log()
	trace.Stop() // returns once every byte of the trace is written
	w.Header().Set(TraceStopTrailer, why)
}

// capWriter passes a trace through and closes full once limit bytes went
// through. Only the tracer's writer goroutine writes.
type capWriter struct {
	w     io.Writer
	n     atomic.Int64
	limit int64
	full  chan struct{}
}

func (c *capWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if total := c.n.Add(int64(n)); total >= c.limit && total-int64(n) < c.limit {
		close(c.full)
	}
	return n, err
}

// parseSeconds parses the seconds parameter ("" is 5).
func parseSeconds(s string) (time.Duration, error) {
	if s == "" {
		return 5 * time.Second, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f <= MaxTraceSeconds) {
		return 0, fmt.Errorf("seconds=%q: want a number in (0, %d]", s, MaxTraceSeconds)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// Snapshot writes the flight recorder's window to a new file in Dir now,
// regardless of MinInterval, and returns its path.
func (a *Agent) Snapshot() (string, error) {
	if a.rec == nil {
		return "", ErrNoRecorder
	}
	path, err := a.rec.snapshot("manual")
	if a.opts.OnSnapshot != nil && !errors.Is(err, ErrBusy) {
		a.opts.OnSnapshot(path, err)
	}
	return path, err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// bucket is a token bucket (kept as its theoretical arrival time, GCRA):
// burst tokens, one more every interval.
type bucket struct {
	mu    sync.Mutex
	every time.Duration
	burst int
	tat   time.Time // when the bucket would be full again
}

func newBucket(every time.Duration, burst int) *bucket {
	return &bucket{every: every, burst: max(burst, 1)}
}

// take takes a token at now and returns 0, or returns how long until one
// is available (and takes nothing).
func (b *bucket) take(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	tat := b.tat
	if tat.Before(now) {
		tat = now
	}
	slack := time.Duration(b.burst-1) * b.every
	if wait := tat.Sub(now) - slack; wait > 0 {
		return wait
	}
	b.tat = tat.Add(b.every)
	return 0
}
