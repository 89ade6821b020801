package agent

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/trace"
	"strconv"
	"time"
)

// EndpointsPrefix is the path under which Endpoints serves.
const EndpointsPrefix = "/debug/latscope/"

// MaxTraceSeconds bounds an on-demand trace.
const MaxTraceSeconds = 300

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

// bearer requires "Authorization: Bearer token".
func bearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="latscope"`)
			http.Error(w, "latscope agent: missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
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
	files, err := listSnapshots(a.opts.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		http.Error(w, "latscope agent: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if files == nil {
		files = []SnapshotFile{}
	}
	writeJSON(w, files)
}

func (a *Agent) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !isSnapshotName(name) {
		http.Error(w, "latscope agent: no such snapshot", http.StatusNotFound)
		return
	}
	f, err := os.Open(filepath.Join(a.opts.Dir, name))
	if err != nil {
		http.Error(w, "latscope agent: no such snapshot", http.StatusNotFound)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		http.Error(w, "latscope agent: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	http.ServeContent(w, r, name, info.ModTime(), f)
}

func (a *Agent) serveTake(w http.ResponseWriter, _ *http.Request) {
	path, err := a.Snapshot()
	switch {
	case errors.Is(err, ErrBusy):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case errors.Is(err, ErrNoRecorder):
		http.Error(w, err.Error(), http.StatusNotFound)
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
// CPU counter and host samples at its start, during it and at its end.
func (a *Agent) serveTrace(w http.ResponseWriter, r *http.Request) {
	secs, err := parseSeconds(r.FormValue("seconds"))
	if err != nil {
		http.Error(w, "latscope agent: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="trace.out"`)
	if err := trace.Start(w); err != nil {
		w.Header().Del("Content-Disposition")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		http.Error(w, "latscope agent: cannot start a trace (another one is running?): "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer trace.Stop()
	a.sample.log()
	defer a.sample.log()
	if a.rec != nil { // its own loop is sampling already
		sleep(r, secs)
		return
	}
	t := time.NewTicker(a.opts.SampleInterval)
	defer t.Stop()
	end := time.After(secs)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-end:
			return
		case <-t.C:
			a.sample.log()
		}
	}
}

// sleep waits d or until the client goes away.
func sleep(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-t.C:
	}
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
