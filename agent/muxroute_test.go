package agent

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// routeMux registers patterns of every kind the mux knows; each handler
// writes the pattern it saw and the values of its wildcards.
func routeMux() *http.ServeMux {
	mux := http.NewServeMux()
	for _, p := range []struct {
		pattern string
		names   []string
	}{
		{"/", nil},
		{"/{$}", nil},
		{"GET /hello/{name}", []string{"name"}},
		{"POST /items/{id}", []string{"id"}},
		{"GET /items/{id}/edit", []string{"id"}},
		{"/files/{path...}", []string{"path"}},
		{"/static/", nil},
		{"/a/{x}/b/{y}", []string{"x", "y"}},
		{"/a/{x}/", []string{"x"}},
		{"/exact/{$}", nil},
		{"/lit/{v}/{$}", []string{"v"}},
		{"example.com/host/{h}", []string{"h"}},
		{"/esc%2Fx/{v}", []string{"v"}},
		{"GET\t/tab/{t}", []string{"t"}},
		{"/tree/", nil},
	} {
		mux.HandleFunc(p.pattern, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "pattern=%q", r.Pattern)
			for _, n := range p.names {
				fmt.Fprintf(w, " %s=%q", n, r.PathValue(n))
			}
		})
	}
	return mux
}

// agentHandler returns mux behind an agent without its recorder, closed when
// the test ends.
func agentHandler(tb testing.TB, mux http.Handler) http.Handler {
	a, err := New(Options{NoRecorder: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() })
	return a.Handler(mux)
}

// serveBoth serves one request with the mux alone and behind the agent and
// returns what each answered: status, Location and body.
func serveBoth(t testing.TB, mux http.Handler, agent http.Handler, r *http.Request) (plain, wrapped string) {
	t.Helper()
	answer := func(h http.Handler) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.Clone(r.Context()))
		return fmt.Sprintf("%d %q %s", w.Code, w.Header().Get("Location"), w.Body.String())
	}
	return answer(mux), answer(agent)
}

func TestMuxRoutesServeAsTheMux(t *testing.T) {
	mux := routeMux()
	h := agentHandler(t, mux)
	for _, c := range []struct{ method, target string }{
		{"GET", "/"}, {"GET", "/x"}, {"GET", "/hello/ann"}, {"HEAD", "/hello/ann"}, {"GET", "/hello/a%2Fb"},
		{"GET", "/hello/a%25b"}, {"GET", "/hello/ann/"}, {"GET", "/hello/"}, {"GET", "/hello"}, {"PUT", "/hello/ann"},
		{"POST", "/items/7"}, {"GET", "/items/7"}, {"GET", "/items/7/edit"}, {"DELETE", "/items/7/edit"},
		{"GET", "/files/a/b/c.txt"}, {"GET", "/files/"}, {"GET", "/files"}, {"GET", "/files/a%20b/c%2Fd"},
		{"GET", "/static/css/x.css"}, {"GET", "/static"}, {"GET", "/a/1/b/2"}, {"GET", "/a/1/"}, {"GET", "/a/1/c/d"},
		{"GET", "/a/1"}, {"GET", "/exact/"}, {"GET", "/exact"}, {"GET", "/exact/more"}, {"GET", "/lit/v1/"}, {"GET", "/lit/v1"},
		{"GET", "http://example.com/host/h1"}, {"GET", "http://example.com:8080/host/h1"}, {"GET", "http://other.com/host/h1"},
		{"GET", "/esc%2Fx/v1"}, {"GET", "/esc/x/v1"}, {"GET", "/tab/t1"}, {"GET", "/tree"}, {"GET", "/tree/leaf"},
		{"GET", "/a//b"}, {"GET", "/hello/./ann"}, {"GET", "/files/../hello/ann"}, {"GET", "/hello/ann?q=1"},
		{"CONNECT", "/hello/ann"}, {"GET", "*"},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if c.target == "*" {
			r.RequestURI = "*"
		}
		plain, wrapped := serveBoth(t, mux, h, r)
		if plain != wrapped {
			t.Errorf("%s %s: the mux answers %s, behind the agent %s", c.method, c.target, plain, wrapped)
		}
	}
}

// TestMuxRoutesOneSearch checks which requests the agent serves after its
// own search, and which it leaves to the mux.
func TestMuxRoutesOneSearch(t *testing.T) {
	mux := routeMux()
	for _, c := range []struct {
		method, target string
		fast           bool
	}{
		{"GET", "/", true},
		{"GET", "/nothing/here", true}, // the catch-all "/"
		{"GET", "/static/css/x.css", true},
		{"GET", "/exact/", true},
		{"DELETE", "/items/7/edit", true}, // 405 from the mux: pattern ""
		{"GET", "/static//x", true},       // the mux's redirect to the clean path
		{"GET", "/tree", true},            // trailing-slash redirect
		{"GET", "/hello/ann", false},      // a wildcard: only the mux sets its value
		{"GET", "/files/a/b", false},
		{"GET", "/lit/v1/", false},
		{"GET", "*", false},
	} {
		r := httptest.NewRequest(c.method, "/", nil)
		r.URL.Path, r.RequestURI = c.target, c.target
		h, pattern := mux.Handler(r)
		if got := serveRouted(httptest.NewRecorder(), r, h, pattern); got != c.fast {
			t.Errorf("%s %s (pattern %q): served by the agent %v, want %v", c.method, c.target, pattern, got, c.fast)
		}
	}
}

// FuzzMuxRoutes serves arbitrary requests with the mux alone and behind the
// agent: the answers must be the same.
func FuzzMuxRoutes(f *testing.F) {
	for _, s := range []string{"/hello/ann", "/files/a/b", "/a/1/b/2", "/hello/a%2Fb", "/tree", "/a//b", "/lit/v/", "/esc%2Fx/v"} {
		f.Add("GET", s)
	}
	f.Add("POST", "/items/%41")
	mux := routeMux()
	h := agentHandler(f, mux)
	f.Fuzz(func(t *testing.T, method, target string) {
		r, err := http.NewRequest(method, "http://example.com"+target, nil)
		if err != nil || !strings.HasPrefix(target, "/") {
			return
		}
		r.RequestURI = target
		plain, wrapped := serveBoth(t, mux, h, r)
		if plain != wrapped {
			t.Errorf("%q %q: the mux answers %s, behind the agent %s", method, target, plain, wrapped)
		}
	})
}
