package jvm

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/jfr"
)

// TestCallPathTerms: a shared helper beneath two callers is two terms on
// the JVM too, and direct recursion folds.
func TestCallPathTerms(t *testing.T) {
	rec := &jfr.Recording{Chunks: []jfr.Chunk{{Start: t0, Duration: 10 * time.Second}}}
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * 1e9)) }
	read := "java.net.Socket$SocketInputStream.read"
	evs := []jfr.Event{
		ev("jdk.SocketRead", at(1), 4*time.Millisecond, "w1", read, "com.acme.Remote.exec", "com.acme.Users.get", "com.acme.Ctl.handle"),
		ev("jdk.SocketRead", at(2), 45*time.Millisecond, "w1", read, "com.acme.Remote.exec", "com.acme.Orders.list", "com.acme.Ctl.handle"),
		ev("jdk.SocketRead", at(3), 45*time.Millisecond, "w2", read, "com.acme.Remote.exec", "com.acme.Orders.list", "com.acme.Ctl.handle"),
		ev("jdk.SocketRead", at(4), 3*time.Millisecond, "w2", read, "com.acme.Remote.exec", "com.acme.Tree.walk", "com.acme.Tree.walk", "com.acme.Tree.walk", "com.acme.Ctl.handle"),
	}
	o := DefaultOptions
	o.Handler, o.Requests = "Ctl.handle", 2
	res := run(t, o, rec, evs)
	labels := budget.Labels(res.Terms)
	got := map[string]int64{}
	for _, ts := range res.Groups[0].Terms {
		got[labels[ts.Term]] = ts.Wait
		if p := res.Terms[ts.Term].Path; p[0] != "com.acme.Ctl.handle" {
			t.Errorf("path %q does not start at the handler", p)
		}
	}
	want := map[string]int64{
		"com.acme.Users.get › com.acme.Remote.exec":   4e6,
		"com.acme.Orders.list › com.acme.Remote.exec": 90e6,
		"com.acme.Tree.walk › com.acme.Remote.exec":   3e6,
	}
	for l, w := range want {
		if got[l] != w {
			t.Errorf("%s: wait %d, want %d (terms: %v)", l, got[l], w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("terms %v, want %v", got, want)
	}
	for _, tm := range res.Terms {
		if strings.Count(strings.Join(tm.Path, " "), "Tree.walk") > 1 {
			t.Errorf("recursion not folded: %q", tm.Path)
		}
	}
}

// TestCallPathRegions: CPU samples in a helper that two callers share are
// split by caller in the regions line, not all given to the helper, in
// both the handler mode and the request mode.
func TestCallPathRegions(t *testing.T) {
	rec := &jfr.Recording{Chunks: []jfr.Chunk{{Start: t0, Duration: 10 * time.Second}}}
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * 1e9)) }
	sha := "com.acme.Burn.sha"
	var evs []jfr.Event
	for i := range 6 { // three samples in sha under lockedSection, one under etag, two in handle itself
		caller := "com.acme.Ctl.lockedSection"
		switch {
		case i == 3:
			caller = "com.acme.Ctl.etag"
		case i > 3:
			evs = append(evs, ev("jdk.ExecutionSample", at(1+float64(i)/100), 0, "w1", "com.acme.Ctl.handle"))
			continue
		}
		evs = append(evs, ev("jdk.ExecutionSample", at(1+float64(i)/100), 0, "w1", "java.security.MessageDigest.digest", sha, caller, "com.acme.Ctl.handle"))
	}
	want := map[string]int{"com.acme.Ctl.lockedSection › com.acme.Burn.sha": 3, "com.acme.Ctl.etag › com.acme.Burn.sha": 1, "com.acme.Ctl.handle": 2}
	check := func(t *testing.T, res *budget.Result) {
		got := map[string]int{}
		for _, r := range res.Groups[0].Regions {
			got[r.Name] = r.CPUSamples
		}
		for name, n := range want {
			if got[name] != n {
				t.Errorf("region %s: %d samples, want %d (regions %v)", name, got[name], n, got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("regions %v, want %v", got, want)
		}
	}
	t.Run("handler", func(t *testing.T) {
		o := DefaultOptions
		o.Handler, o.Requests = "Ctl.handle", 1
		check(t, run(t, o, rec, evs))
	})
	t.Run("requests", func(t *testing.T) {
		req := ev("latscope.Request", at(0.5), time.Second, "w1", "io.latscope.Request.end", "com.acme.Ctl.serve")
		req.Req = jfr.ReqInfo{Route: "/ctl", RequestID: 1}
		check(t, run(t, DefaultOptions, rec, append(slices.Clone(evs), req)))
	})
}
