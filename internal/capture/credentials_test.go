package capture

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/latscope/latscope/internal/tier"
)

// TestTokenStaysWithService: a service that redirects to another origin
// (here another port on the same host, which Go's own redirect rule lets
// the header reach) does not pass the token on.
func TestTokenStaysWithService(t *testing.T) {
	var leaked atomic.Value
	leaked.Store("")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			leaked.Store(a)
		}
		http.NotFound(w, r)
	}))
	defer other.Close()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer svc.Close()
	o := DefaultOptions
	o.URL, o.Seconds, o.Token = svc.URL, 1, "s3cret"
	_, err := Run(context.Background(), filepath.Join(t.TempDir(), "cap"), o)
	if err == nil {
		t.Fatal("a capture from a service that redirects to a 404 succeeded")
	}
	if a := leaked.Load().(string); a != "" {
		t.Errorf("the other origin received Authorization %q", a)
	}
}

// TestMetaHidesPassword: capture.json, which users share, holds the URL
// without its password, and errors do not print it.
func TestMetaHidesPassword(t *testing.T) {
	tier.Busy(t)
	srv := service(t, false, nil)
	dir := filepath.Join(t.TempDir(), "cap")
	o := DefaultOptions
	o.URL, o.Seconds, o.NoProfile = strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1), 1, true
	if _, err := Run(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("capture.json holds the password:\n%s", b)
	}
	o.URL += "/?q=1"
	if err := o.Validate(); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Validate = %v: want an error without the password", err)
	}
}
