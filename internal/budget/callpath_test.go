package budget

import (
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/frame"
)

func pathTerm(path ...string) Term {
	return Term{Frame: path[len(path)-1], Path: path, Mechanism: "net.(*netFD).Read", Kind: frame.Network}
}

func TestLabels(t *testing.T) {
	const (
		getUser    = "github.com/acme/svc/handlers.GetUser"
		listOrders = "github.com/acme/svc/handlers.ListOrders"
		query      = "github.com/acme/svc/store.(*Store).query"
		upstream   = "github.com/acme/svc/handlers.callUpstream"
		retry      = "github.com/acme/svc/client.retry"
	)
	terms := []Term{
		pathTerm(getUser, query),
		pathTerm(listOrders, query),
		pathTerm(getUser, upstream),
		pathTerm(listOrders, retry, query), // same leaf, longer path
		{Kind: frame.Sleep},
		pathTerm(query), // a goroutine started outside any caller
	}
	want := []string{
		"handlers.GetUser › store.(*Store).query",
		"handlers.ListOrders › store.(*Store).query",
		"handlers.callUpstream",
		"client.retry › store.(*Store).query",
		"(no app frame)",
		"store.(*Store).query",
	}
	got := Labels(terms)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("label %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestMatches(t *testing.T) {
	tm := pathTerm("main.handle", "main.handle.func2.1", "github.com/acme/svc/store.(*Store).query")
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"query", true},
		{"(*Store).query", true},
		{"store.(*Store).query", true},
		{"handle", true},         // the closure's enclosing function is on the path
		{"handle > query", true}, // consecutive frames (closure folded to handle)
		{"handle›query", true},   // the display separator
		{"handle.func2 > query", true},
		{"query > handle", false}, // order matters
		{"andle", false},          // whole names only
		{"main.handle.func2.1", true},
		{"other", false},
		{"", false},
	} {
		if got := tm.Matches(tt.name); got != tt.want {
			t.Errorf("Matches(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	// frames between the named ones: an exported wrapper beneath the caller
	wrapped := pathTerm("main.user", "github.com/acme/store.(*Store).Query", "github.com/acme/store.(*Store).query")
	if !wrapped.Matches("user>query") || !wrapped.Matches("user > (*Store).Query > query") || wrapped.Matches("Query>user") {
		t.Error("user>query: frames between the named ones")
	}
	if got := Labels([]Term{wrapped, pathTerm("main.orders", "github.com/acme/store.(*Store).Query", "github.com/acme/store.(*Store).query")})[0]; got != "main.user › store.(*Store).Query › (*Store).query" {
		t.Errorf("label %q: the package is said once per run of frames in it", got)
	}
	// A term without a path (a JVM recording) matches by its frame.
	if !(Term{Frame: "com.acme.Repo.find"}).Matches("Repo.find") {
		t.Error("frame-only term does not match its frame")
	}
}

func TestCheckName(t *testing.T) {
	terms := []Term{
		pathTerm("main.GetUser", "github.com/acme/store.query"),
		pathTerm("main.ListOrders", "github.com/acme/store.query"),
		pathTerm("main.GetUser", "github.com/acme/cache.query"),
		pathTerm("main.handle", "main.handle.func1", "main.work"),
	}
	for _, tt := range []struct {
		name      string
		ambiguous bool
	}{
		{"store.query", false},  // one function, two callers: not ambiguous
		{"query", true},         // store.query and cache.query
		{"GetUser>query", true}, // still two functions beneath GetUser
		{"GetUser>store.query", false},
		{"handle", false}, // handle and its closure are one function
		{"nothing", false},
	} {
		err := CheckName(terms, tt.name)
		if (err != nil) != tt.ambiguous {
			t.Errorf("CheckName(%q) = %v, want ambiguous %v", tt.name, err, tt.ambiguous)
		}
		if err != nil && !strings.Contains(err.Error(), "store.query") {
			t.Errorf("CheckName(%q) = %v: does not list the candidates", tt.name, err)
		}
	}
}

func TestEnclosing(t *testing.T) {
	for fn, want := range map[string]string{
		"main.handle.func2.1":                    "main.handle",
		"main.handle.func2":                      "main.handle",
		"main.handle":                            "main.handle",
		"github.com/a/b.(*T).M.func1":            "github.com/a/b.(*T).M",
		"github.com/a/b.init.gowrap3":            "github.com/a/b.init",
		"github.com/a/func1.F":                   "github.com/a/func1.F",
		"github.com/a/b.(*Pool[...]).acquire":    "github.com/a/b.(*Pool[...]).acquire",
		"github.com/a/b.(*Pool[...]).get.func12": "github.com/a/b.(*Pool[...]).get",
	} {
		if got := declared(fn); got != want {
			t.Errorf("declared(%q) = %q, want %q", fn, got, want)
		}
	}
}

// TestMatchesMechanism: a frame names its waits and its CPU; a name whose
// last part is a wait's mechanism beneath a frame names that wait alone
// (remove=sharedSection>Lock keeps sharedSection's CPU).
func TestMatchesMechanism(t *testing.T) {
	path := []string{"main.serve", "main.sharedSection"}
	lock := Term{Frame: "main.sharedSection", Path: path, Mechanism: "sync.(*Mutex).Lock", Kind: frame.Sync}
	rlock := Term{Frame: "main.sharedSection", Path: path, Mechanism: "sync.(*RWMutex).RLock", Kind: frame.Sync}
	cpu := Term{Frame: "main.sharedSection", Path: path, Kind: frame.Running}
	if !cpu.IsCPU() || lock.IsCPU() {
		t.Fatal("IsCPU: a term of kind running without a mechanism is a frame's CPU")
	}
	for _, tt := range []struct {
		name            string
		lock, rlock, cp bool
	}{
		{"sharedSection", true, true, true},
		{"sharedSection>Lock", true, false, false},
		{"serve > (*Mutex).Lock", true, false, false},
		{"sharedSection>RLock", false, true, false},
		{"Lock", false, false, false}, // a mechanism narrows a frame; alone it names nothing
		{"Lock>sharedSection", false, false, false},
	} {
		if lock.Matches(tt.name) != tt.lock || rlock.Matches(tt.name) != tt.rlock || cpu.Matches(tt.name) != tt.cp {
			t.Errorf("%q matches lock %v, rlock %v, cpu %v; want %v, %v, %v", tt.name,
				lock.Matches(tt.name), rlock.Matches(tt.name), cpu.Matches(tt.name), tt.lock, tt.rlock, tt.cp)
		}
	}
	terms := []Term{lock, rlock, cpu}
	if err := CheckName(terms, "sharedSection>Lock"); err != nil {
		t.Errorf("sharedSection>Lock: %v", err)
	}
	if err := CheckName(terms, "sharedSection"); err != nil {
		t.Errorf("sharedSection (its waits and its CPU are one function's): %v", err)
	}
	if got := NameCandidates(terms, "sharedSection>Lock"); len(got) != 1 || got[0] != "main.serve › sharedSection › sync.(*Mutex).Lock" {
		t.Errorf("candidates %q", got)
	}
}
