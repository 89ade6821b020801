package corpus

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/tier"
)

// The service of TestGoInstalledBinary, as two modules served by a file
// proxy: example.com/shop (package main and its store) and a dependency
// of its own, example.com/pace, whose context-aware sleep the store waits
// in. Installed with `go install example.com/shop@v1.0.0`, every frame of
// the binary, the service's own among them, is in the module cache.
var (
	paceModule = map[string]string{
		"go.mod": "module example.com/pace\n\ngo 1.22\n",
		"pace.go": `// Package pace waits, as retry and backoff libraries do.
package pace

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
`,
	}
	shopModule = map[string]string{
		"go.mod": "module example.com/shop\n\ngo 1.22\n\nrequire example.com/pace v1.0.0\n",
		"store/store.go": `// Package store is the shop's data access.
package store

import (
	"context"
	"time"

	"example.com/pace"
)

type Store struct{}

// Get reads an item: 4 ms, waited for in the pace library.
func (s *Store) Get(ctx context.Context, id string) (string, error) {
	if err := pace.Sleep(ctx, 4*time.Millisecond); err != nil {
		return "", err
	}
	return "item " + id, nil
}
`,
		"main.go": `// Command shop serves /item under 4 clients of its own, and writes a
// runtime/trace of a window after warm-up to the file given.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/trace"
	"sync"
	"time"

	"example.com/shop/store"
)

var st store.Store

func handleItem(w http.ResponseWriter, r *http.Request) {
	ctx, task := trace.NewTask(r.Context(), "GET /item")
	defer task.End()
	v, err := st.Get(ctx, r.URL.Query().Get("id"))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	fmt.Fprintln(w, v)
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	http.HandleFunc("GET /item", handleItem)
	go http.Serve(ln, nil)
	url := "http://" + ln.Addr().String() + "/item?id=7"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(url)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := trace.Start(f); err != nil {
		panic(err)
	}
	time.Sleep(400 * time.Millisecond)
	trace.Stop()
	f.Close()
	close(stop)
	wg.Wait()
	_ = context.Background
}
`,
	}
)

// writeProxyModule lays out one module version in a GOPROXY directory.
func writeProxyModule(t *testing.T, proxy, mod, version string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(proxy, mod, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("list", version+"\n")
	write(version+".info", `{"Version":"`+version+`","Time":"2026-01-01T00:00:00Z"}`)
	write(version+".mod", files["go.mod"])
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w, err := zw.Create(mod + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGoInstalledBinary (issue #36): a service installed with `go install
// module@version` has every frame in the module cache, its own code too.
// The module holding package main's source is the application: the wait
// in the dependency's sleep is the store's term, not the dependency's, and
// no term falls back to the function-name rules. With -update it keeps
// its trace for the fast tier (TestGoInstalledKept).
func TestGoInstalledBinary(t *testing.T) {
	tier.Timing(t)
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	tmp := t.TempDir()
	proxy, gopath, gobin := filepath.Join(tmp, "proxy"), filepath.Join(tmp, "gopath"), filepath.Join(tmp, "bin")
	writeProxyModule(t, proxy, "example.com/pace", "v1.0.0", paceModule)
	writeProxyModule(t, proxy, "example.com/shop", "v1.0.0", shopModule)
	cmd := exec.Command(gotool, "install", "example.com/shop@v1.0.0")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOPATH="+gopath, "GOBIN="+gobin, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"),
		"GOPROXY=file://"+filepath.ToSlash(proxy), "GOSUMDB=off", "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local", "GO111MODULE=on")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install example.com/shop@v1.0.0: %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "shop")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	trace := filepath.Join(tmp, "shop.trace")
	if out, err := exec.Command(bin, trace).CombinedOutput(); err != nil {
		t.Fatalf("shop: %v\n%s", err, out)
	}
	checkInstalled(t, trace)
	if *update { // keep it for the fast tier's TestGoInstalledKept
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keptInstalled, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("kept %s (%d bytes)", keptInstalled, len(b))
	}
}

// keptInstalled is a trace TestGoInstalledBinary recorded (with -update).
const keptInstalled = "testdata/goinstall/shop.trace"

// TestGoInstalledKept is TestGoInstalledBinary's check on the trace it
// kept: the fast tier's guard of the rule.
func TestGoInstalledKept(t *testing.T) {
	t.Parallel()
	checkInstalled(t, keptInstalled)
}

// checkInstalled asserts the analysis of a trace of the installed shop.
func checkInstalled(t *testing.T, trace string) {
	t.Helper()
	r, err := pipeline.File(context.Background(), trace, pipeline.Options{
		Budget: budget.DefaultOptions,
		Report: render.Inputs{File: "shop.trace", CPUSeconds: -1, MinShare: 0.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Result
	if res.Info.Module != "example.com/shop" || !res.Info.ModuleFromMain {
		t.Errorf("main module %q (from package main's source: %v), want example.com/shop from it", res.Info.Module, res.Info.ModuleFromMain)
	}
	i := slices.IndexFunc(res.Groups, func(g *budget.Group) bool { return g.Name == "GET /item" })
	if i < 0 {
		t.Fatalf("no GET /item requests")
	}
	g := res.Groups[i]
	if g.Count < 50 {
		t.Fatalf("%d requests: too few to judge", g.Count)
	}
	top := res.Terms[g.Terms[0].Term]
	t.Logf("%d requests, mean %.2f ms; top term %s (path %q, fallback %v), critical %.2f ms per request",
		g.Count, g.Latency.Mean/1e6, top.Name(), top.Path, top.Fallback, float64(g.Terms[0].Critical)/float64(g.Count)/1e6)
	if top.Frame != "example.com/shop/store.(*Store).Get" || top.Mechanism != "example.com/pace.Sleep" {
		t.Errorf("top term %s (frame %q, mechanism %q), want the store's Get waiting in pace.Sleep", top.Name(), top.Frame, top.Mechanism)
	}
	for _, ts := range g.Terms {
		term := res.Terms[ts.Term]
		if term.Fallback || strings.HasPrefix(term.Frame, "example.com/pace") {
			t.Errorf("term %s (frame %q, fallback %v): the dependency or the fallback rule named it", term.Name(), term.Frame, term.Fallback)
		}
	}
	var b bytes.Buffer
	if err := r.Write(&b, false); err != nil {
		t.Fatal(err)
	}
	if text := b.String(); !strings.Contains(text, "main module example.com/shop (the module of package main's source") {
		t.Errorf("the report does not say which module is the application, and why:\n%s", text)
	} else {
		t.Logf("\n%s", text[:min(len(text), 1500)])
	}
}
