package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// plantedName is the name an attacker gives a planted file: a valid
// snapshot name, dated in the future so that it sorts last.
const plantedName = "latscope-20990101T000000.000000Z-p1-manual.trace"

// maxTraceOvershoot is how far past MaxTraceBytes an on-demand trace may
// go: what the tracer flushes between the cap and the end of trace.Stop.
const maxTraceOvershoot = 4 << 20

// otherUID is the owner of files "another local user" planted (nobody).
const otherUID = 65534

// secretFile writes a file only its owner may read, outside dir, and
// returns its path and content.
func secretFile(t *testing.T) (string, string) {
	t.Helper()
	secret := filepath.Join(t.TempDir(), "shadow")
	const content = "root:$6$secret-hash:20000:0:99999:7:::\n"
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return secret, content
}

// needRoot skips the part of a test that needs to chown files to another
// user, saying so.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("SKIPPED (not root, euid %d): this case chowns files to uid %d to play another local user; run the tests as root to cover it", os.Geteuid(), otherUID)
	}
}

// TestSnapshotDirRefused: New refuses a snapshot directory that another
// user owns or that others may write, instead of writing and serving
// snapshots from it. The default directory (under the shared temp dir) is
// checked the same way and must not be readable by others either.
func TestSnapshotDirRefused(t *testing.T) {
	tests := []struct {
		name     string
		dflt     bool // use the default directory (TMPDIR set to a test dir)
		root     bool // needs root (chown)
		setup    func(t *testing.T, dir string)
		wantErr  string
		wantMode os.FileMode // when the directory is accepted: its mode
	}{
		{name: "default: created private", dflt: true, wantMode: 0o700},
		{name: "explicit: created private", wantMode: 0o700},
		{name: "explicit: existing 0750 is accepted", setup: mkdirMode(0o750), wantMode: 0o750},
		{name: "default: planted by another user", dflt: true, root: true, setup: chownDir(otherUID, 0o700), wantErr: "owned by uid 65534"},
		{name: "explicit: owned by another user", root: true, setup: chownDir(otherUID, 0o700), wantErr: "owned by uid 65534"},
		{name: "default: world-writable", dflt: true, setup: mkdirMode(0o777), wantErr: "mode 0777"},
		{name: "default: group-readable", dflt: true, setup: mkdirMode(0o750), wantErr: "mode 0750"},
		{name: "explicit: group-writable", setup: mkdirMode(0o770), wantErr: "mode 0770"},
		{name: "default: a symlink to a private directory", dflt: true, setup: symlinkDir, wantErr: "symbolic link"},
		{name: "explicit: a file", setup: func(t *testing.T, dir string) { os.WriteFile(dir, nil, 0o600) }, wantErr: "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				needRoot(t)
			}
			var opts Options
			dir := filepath.Join(t.TempDir(), "snaps")
			if tt.dflt {
				tmp := t.TempDir()
				t.Setenv("TMPDIR", tmp)
				dir = filepath.Join(tmp, fmt.Sprintf("latscope-%d", os.Geteuid()))
			} else {
				opts.Dir = dir
			}
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			a, err := New(opts)
			if err == nil {
				defer a.Close()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("New = %v; want an error naming %s and saying %q", err, dir, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Dir() != dir {
				t.Errorf("Dir() = %s, want %s", a.Dir(), dir)
			}
			info, err := os.Lstat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode() != os.ModeDir|tt.wantMode {
				t.Errorf("directory mode %v, want %v", info.Mode(), os.ModeDir|tt.wantMode)
			}
		})
	}
}

func mkdirMode(mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil { // not subject to the umask
			t.Fatal(err)
		}
	}
}

func chownDir(uid int, mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		mkdirMode(mode)(t, dir)
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
}

func symlinkDir(t *testing.T, dir string) {
	t.Helper()
	target := t.TempDir() // private, ours
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

// TestPlantedSnapshotNotServed reproduces the planted-file attack: a file
// named like a snapshot that the service did not write (a symlink to a file
// only the service may read, a hard link to it, a file of another user) is
// neither listed, nor served, nor pruned; a real snapshot still is.
func TestPlantedSnapshotNotServed(t *testing.T) {
	tests := []struct {
		name  string
		root  bool
		plant func(t *testing.T, path, secret string)
	}{
		{"symlink to a secret file", false, func(t *testing.T, path, secret string) {
			if err := os.Symlink(secret, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"hard link to a secret file", false, func(t *testing.T, path, secret string) {
			if err := os.Link(secret, path); err != nil {
				t.Skipf("SKIPPED: cannot hard-link across the test's temporary directories: %v", err)
			}
		}},
		{"symlink to a directory", false, func(t *testing.T, path, secret string) {
			if err := os.Symlink(filepath.Dir(secret), path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a directory named like a snapshot", false, func(t *testing.T, path, secret string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"a fifo named like a snapshot (would block the reader)", false, func(t *testing.T, path, secret string) {
			if err := mkfifo(path); err != nil {
				t.Skipf("SKIPPED: mkfifo: %v", err)
			}
		}},
		{"a regular file of another user", true, func(t *testing.T, path, secret string) {
			b, _ := os.ReadFile(secret)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(path, otherUID, otherUID); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				needRoot(t)
			}
			dir := t.TempDir()
			secret, content := secretFile(t)
			a, err := New(Options{Dir: dir, MaxSnapshots: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			planted := filepath.Join(dir, plantedName)
			tt.plant(t, planted, secret)
			h := a.Endpoints()

			code, body := serve(h, http.MethodGet, EndpointsPrefix+"snapshots/"+plantedName)
			if code != http.StatusNotFound || strings.Contains(body, "secret-hash") || strings.Contains(body, content) {
				t.Errorf("GET the planted name: status %d, body %.80q; want 404 and not the secret", code, body)
			}
			// A real snapshot is listed and served; the planted one is not
			// listed, and pruning (MaxSnapshots 1) leaves it alone.
			code, body = serve(h, http.MethodPost, EndpointsPrefix+"snapshot")
			var took struct{ Name string }
			if err := json.Unmarshal([]byte(body), &took); code != 200 || err != nil {
				t.Fatalf("POST snapshot: %d %s", code, body)
			}
			code, body = serve(h, http.MethodGet, EndpointsPrefix+"snapshots")
			var list []SnapshotFile
			if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || len(list) != 1 || list[0].Name != took.Name {
				t.Errorf("list: %d %s; want only %s", code, body, took.Name)
			}
			if code, body = serve(h, http.MethodGet, EndpointsPrefix+"snapshots/"+took.Name); code != 200 || len(body) == 0 {
				t.Errorf("GET the real snapshot: status %d, %d bytes", code, len(body))
			}
			if _, err := os.Lstat(planted); err != nil {
				t.Errorf("the planted file was removed (prune must only touch the agent's own files): %v", err)
			}
			if b, err := os.ReadFile(secret); err != nil || string(b) != content {
				t.Errorf("the secret file changed: %q, %v", b, err)
			}
		})
	}
}

// serve runs one request against h and returns the status and body.
func serve(h http.Handler, method, target string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Code, rec.Body.String()
}

// TestSnapshotFileMode: snapshots are readable by the service's user only.
func TestSnapshotFileMode(t *testing.T) {
	a, err := New(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	path, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode() != 0o600 {
		t.Errorf("snapshot mode %v, want -rw-------", info.Mode())
	}
}

// TestManualSnapshotRateLimit: POST snapshot and GET flight share a token
// bucket; beyond it the answer is 429 with Retry-After.
func TestManualSnapshotRateLimit(t *testing.T) {
	a, err := New(Options{Dir: t.TempDir(), ManualInterval: time.Hour, ManualBurst: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h := a.Endpoints()
	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, "snapshot", 200},
		{http.MethodGet, "flight", 200},
		{http.MethodPost, "snapshot", http.StatusTooManyRequests},
		{http.MethodGet, "flight", http.StatusTooManyRequests},
		{http.MethodGet, "snapshots", 200}, // listing is not limited
	}
	for i, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, EndpointsPrefix+tt.path, nil))
		if rec.Code != tt.want {
			t.Errorf("request %d, %s %s: status %d, want %d", i, tt.method, tt.path, rec.Code, tt.want)
		}
		if tt.want == http.StatusTooManyRequests {
			ra, err := strconv.Atoi(rec.Header().Get("Retry-After"))
			if err != nil || ra < 3000 || ra > 3600 {
				t.Errorf("request %d: Retry-After %q, want the seconds until the next token (about 3600)", i, rec.Header().Get("Retry-After"))
			}
		}
	}
	files, _ := os.ReadDir(a.Dir())
	if len(files) != 1 {
		t.Errorf("%d files in the directory after the limited requests, want 1", len(files))
	}
}

func TestTokenBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name  string
		every time.Duration
		burst int
		at    []time.Duration // request times after t0
		want  []time.Duration // 0: allowed; else the wait reported
	}{
		{"burst then refuse", 10 * time.Second, 3, []time.Duration{0, 0, 0, 0}, []time.Duration{0, 0, 0, 10 * time.Second}},
		{"refills one per interval", 10 * time.Second, 1, []time.Duration{0, 4 * time.Second, 10 * time.Second, 25 * time.Second, 26 * time.Second},
			[]time.Duration{0, 6 * time.Second, 0, 0, 9 * time.Second}},
		{"never more than burst", 10 * time.Second, 2, []time.Duration{time.Hour, time.Hour, time.Hour}, []time.Duration{0, 0, 10 * time.Second}},
		{"157 requests in 6 s", time.Second, 3, spread(157, 6*time.Second), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBucket(tt.every, tt.burst)
			allowed := 0
			for i, d := range tt.at {
				wait := b.take(t0.Add(d))
				if wait == 0 {
					allowed++
				}
				if tt.want != nil && wait != tt.want[i] {
					t.Errorf("request %d at %v: wait %v, want %v", i, d, wait, tt.want[i])
				}
			}
			if tt.want == nil && allowed != 3+5 {
				t.Errorf("%d of %d allowed, want burst 3 + one per second (8)", allowed, len(tt.at))
			}
		})
	}
}

// spread returns n times evenly spread over [0, d).
func spread(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d * time.Duration(i) / time.Duration(n)
	}
	return out
}

// TestTraceSizeCap: an on-demand trace stops once it reaches MaxTraceBytes
// (well before its seconds), is still a readable trace, and says why it
// stopped in a trailer.
func TestTraceSizeCap(t *testing.T) {
	const limit = 256 << 10
	a, err := New(Options{NoRecorder: true, Listen: "127.0.0.1:0", MaxTraceBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // make events: goroutines handing a value back and forth
		c := make(chan int)
		go func() {
			for v := range c {
				_ = v
			}
		}()
		for i := 0; ; i++ {
			select {
			case <-stop:
				close(c)
				return
			case c <- i:
			}
		}
	}()
	start := time.Now()
	resp, err := http.Get("http://" + a.Addr() + EndpointsPrefix + "trace?seconds=30")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, buf.Bytes())
	}
	t.Logf("trace of %d bytes (cap %d) in %v; stopped: %q", buf.Len(), limit, took, resp.Trailer.Get(TraceStopTrailer))
	if took > 20*time.Second {
		t.Errorf("the trace ran %v: the size cap did not stop it", took)
	}
	if buf.Len() < limit || buf.Len() > limit+maxTraceOvershoot {
		t.Errorf("trace of %d bytes; want at least the cap (%d) and at most %d over it", buf.Len(), limit, maxTraceOvershoot)
	}
	if got := resp.Trailer.Get(TraceStopTrailer); !strings.Contains(got, "MaxTraceBytes") {
		t.Errorf("trailer %s = %q, want the size cap named", TraceStopTrailer, got)
	}
	traceEvents(t, "capped", &buf) // parses to the end
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
