package promtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/tier"
)

// RetraceEnv is the environment variable that makes Replay record again.
const RetraceEnv = "LATSCOPE_RETRACE"

// exchange is one recorded HTTP answer of a real Prometheus.
type exchange struct {
	Key         string `json:"key"` // method, path and the sorted query and form
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
}

// Replay serves the answers a real Prometheus gave once to the queries of
// a test, kept in testdata/NAME.prom.json.gz of the calling package, so
// that the test runs in the fast tier without a server. With
// LATSCOPE_RETRACE=1 (in the timing tier, where a Prometheus may start) it
// starts the real one on om (Start), passes every request through to it
// and rewrites the file when the test ends. A query the file does not hold
// answers 599 with the query, so that a test whose queries changed fails
// saying what to record again.
func Replay(t testing.TB, name string, om []byte) string {
	t.Helper()
	path := filepath.Join("testdata", name+".prom.json.gz")
	if os.Getenv(RetraceEnv) == "1" {
		tier.Require(t, "recording a real Prometheus's answers")
		return record(t, path, Start(t, om))
	}
	kept, err := readExchanges(path)
	if err != nil {
		t.Fatalf("%v: record it with %s=1 %s=timing go test -run '%s' in this package", err, RetraceEnv, tier.Env, t.Name())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, err := key(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		e, ok := kept[k]
		if !ok {
			http.Error(w, "promtest: no recorded answer for "+k+" (record again: "+RetraceEnv+"=1)", 599)
			return
		}
		if e.ContentType != "" {
			w.Header().Set("Content-Type", e.ContentType)
		}
		w.WriteHeader(e.Status)
		io.WriteString(w, e.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// record passes requests through to the real Prometheus at base and keeps
// each answer, written to path when t ends.
func record(t testing.TB, path, base string) string {
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]exchange{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		k, _ := resp.Request.Context().Value(keyCtx{}).(string)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		got[k] = exchange{Key: k, Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: string(body)}
		mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, err := key(r) // reads the form and puts it back for the proxy
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Header.Del("Accept-Encoding") // keep answers as they read, not gzipped
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyCtx{}, k)))
	}))
	t.Cleanup(func() {
		srv.Close()
		if t.Failed() {
			t.Logf("promtest: the test failed: %s not rewritten", path)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if err := writeExchanges(path, got); err != nil {
			t.Errorf("writing %s: %v", path, err)
		}
	})
	return srv.URL
}

// keyCtx carries a request's key from the recording handler to the
// proxy's answer.
type keyCtx struct{}

// key names a request by its method, path and sorted parameters (query
// string and form body alike), whatever their order on the wire.
func key(r *http.Request) (string, error) {
	params := url.Values{}
	for k, v := range r.URL.Query() {
		params[k] = append(params[k], v...)
	}
	if r.Body != nil && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return "", err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return "", err
		}
		for k, v := range form {
			params[k] = append(params[k], v...)
		}
	}
	for _, v := range params {
		slices.Sort(v)
	}
	return r.Method + " " + r.URL.Path + "?" + params.Encode(), nil
}

func readExchanges(path string) (map[string]exchange, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var list []exchange
	if err := json.NewDecoder(zr).Decode(&list); err != nil {
		return nil, err
	}
	out := map[string]exchange{}
	for _, e := range list {
		out[e.Key] = e
	}
	return out, nil
}

func writeExchanges(path string, got map[string]exchange) error {
	list := make([]exchange, 0, len(got))
	for _, e := range got {
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Key < list[j].Key })
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	enc.SetIndent("", " ")
	if err := enc.Encode(list); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteString(path, buf.String())
}
