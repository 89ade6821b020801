package jvm

import (
	"context"
	"errors"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/tier"
)

// shopN is the number of requests each of Shop's clients sends (live; the
// kept recording's is in its truth, shop.json).
const shopN = 15

// shopPredict is the prediction checked on /helper: a (10 ms) beside b
// (20 ms).
const shopPredict = "overlap=Shop.a,Shop.b"

// recordShop records internal/jfr/testdata/Shop.java live (timing tier) with 1 ms
// wait thresholds and analyses the recording in request mode.
func recordShop(t *testing.T) (*budget.Result, *Analyzer, map[string][]jfrtest.ShopRequest) {
	t.Helper()
	tier.Require(t, "recording Shop under JFR")
	if _, err := jfr.FindTool(); err != nil {
		t.Skip("LOUD SKIP: no JDK, so no recording of a real JVM service: ", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := jfrtest.RecordShop(ctx, jfrtest.ShopOptions{Dir: t.TempDir(), N: shopN, Overrides: jfrtest.DefaultOverrides})
	if errors.Is(err, jfrtest.ErrNoJDK) {
		t.Skip("LOUD SKIP: no JDK, so no recording of a real JVM service: ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return analyseShop(t, run.Recording, run.Results)
}

// keptShop analyses the kept recording of Shop (internal/jfr/testdata/rec/shop.jfr)
// and returns it with Shop's own timings and the requests a client sent.
func keptShop(t *testing.T) (*budget.Result, *Analyzer, map[string][]jfrtest.ShopRequest, int) {
	t.Helper()
	tr, err := jfrtest.ReadTruth("shop")
	if err != nil {
		t.Fatal(err)
	}
	n, ok := tr.Config["n"].(float64)
	if !ok || n <= 0 {
		t.Fatalf("shop.json: n %v", tr.Config["n"])
	}
	path, err := jfrtest.Kept("shop", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, a, shop := analyseShop(t, path, filepath.Join(jfrtest.KeptDir(), tr.Results))
	return res, a, shop, int(n)
}

// analyseShop analyses a recording of Shop in request mode, with the
// prediction shopPredict, and reads Shop's own timings by route.
func analyseShop(t *testing.T, path, results string) (*budget.Result, *Analyzer, map[string][]jfrtest.ShopRequest) {
	t.Helper()
	reqs, err := jfrtest.ReadShop(results)
	if err != nil {
		t.Fatal(err)
	}
	byRoute := map[string][]jfrtest.ShopRequest{}
	for _, r := range reqs {
		byRoute[r.Route] = append(byRoute[r.Route], r)
	}
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions
	p, err := budget.ParsePrediction(shopPredict)
	if err != nil {
		t.Fatal(err)
	}
	o.Predictions = []budget.Prediction{p}
	a := readAll(t, path, rec, o)
	if err := a.Matched(); err != nil {
		t.Fatal(err)
	}
	return a.Finalize(), a, byRoute
}

// meanPart is Shop's own mean of a part over a route's requests (ms).
func meanPart(rs []jfrtest.ShopRequest, part string) float64 {
	m, _ := meanPartSE(rs, part)
	return m
}

// meanPartSE is Shop's own mean of a part over a route's requests and its
// standard error (ms).
func meanPartSE(rs []jfrtest.ShopRequest, part string) (mean, se float64) {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = float64(r.Parts[part]) / 1e6
	}
	return jfrtest.MeanSE(xs)
}

// termSum sums, per request (ms), the wait, critical and fix of the terms
// of group g that match.
func termSum(res *budget.Result, g *budget.Group, match func(budget.Term) bool) (wait, crit, fix float64, n int) {
	for _, ts := range g.Terms {
		if match(res.Terms[ts.Term]) {
			wait += float64(ts.Wait)
			crit += float64(ts.Critical)
			fix += float64(ts.Fix)
			n++
		}
	}
	c := float64(g.Count) * 1e6
	return wait / c, crit / c, fix / c, n
}

func groupOf(t *testing.T, res *budget.Result, name string) *budget.Group {
	t.Helper()
	for _, g := range res.Groups {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %s", name)
	return nil
}

func onPath(frame string) func(budget.Term) bool {
	return func(t budget.Term) bool {
		for _, f := range t.Path {
			if f == frame {
				return true
			}
		}
		return t.Frame == frame
	}
}

func and(fs ...func(budget.Term) bool) func(budget.Term) bool {
	return func(t budget.Term) bool {
		for _, f := range fs {
			if !f(t) {
				return false
			}
		}
		return true
	}
}

func kindIs(k frame.Kind) func(budget.Term) bool {
	return func(t budget.Term) bool { return t.Kind == k }
}

func mechIs(m string) func(budget.Term) bool {
	return func(t budget.Term) bool { return strings.HasPrefix(t.Mechanism, m) }
}

// near reports whether got is within rel of want, or within abs ms.
func near(got, want, rel, abs float64) bool {
	d := math.Abs(got - want)
	return d <= rel*want || d <= abs
}

// shopAlpha is the false-failure probability of each comparison with
// Shop's own timings in a live run: the tolerance of the method (below) is
// widened by Z(α/2) standard errors of Shop's own mean of the part, and the
// prediction's bound by Z(α) standard errors of Shop's mean of the shorter
// branch. Eleven comparisons: at most 11 × 0.001 ≈ 1.1 % that a live run
// of a correct analysis fails by chance. On the kept recording the same
// rule is deterministic.
const shopAlpha = 0.001

// TestRequestMode checks the request-mode analysis of the kept recording of
// Shop (internal/jfr/testdata/rec/shop.jfr), a JVM service instrumented with the
// Java library, against Shop's own timings (System.nanoTime around each
// part, an instrument independent of JFR, kept in shop.jsonl) and its
// configuration. Tolerance: a wait shorter than the 1 ms threshold is
// not recorded, so per request a term may miss up to 1 ms; the rest of a
// part that JFR does not see (connect and write on loopback) is well under
// 5 % of the parts compared.
func TestRequestMode(t *testing.T) {
	t.Parallel()
	res, a, shop, n := keptShop(t)
	checkShop(t, res, a, shop, n, false)
}

// TestRequestModeLive records Shop live and checks it as TestRequestMode
// checks the kept recording.
func TestRequestModeLive(t *testing.T) {
	tier.Timing(t)
	res, a, shop := recordShop(t)
	checkShop(t, res, a, shop, shopN, false)
}

// TestRequestModeBusy is TestRequestModeLive with both cores busy (two
// `yes` processes): the waits and the critical path still match Shop's own
// timings, because both instruments time the same waits.
func TestRequestModeBusy(t *testing.T) {
	tier.Timing(t)
	for range 2 {
		cmd := exec.Command("yes")
		if err := cmd.Start(); err != nil {
			t.Skip("LOUD SKIP: cannot start a CPU burner (yes): ", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	res, a, shop := recordShop(t)
	checkShop(t, res, a, shop, shopN, true)
}

func checkShop(t *testing.T, res *budget.Result, a *Analyzer, shop map[string][]jfrtest.ShopRequest, n int, busy bool) {
	t.Helper()
	if !a.Requests() {
		t.Fatal("no latscope.Request events")
	}
	want := map[string]int{"/serial": n, "/fanout": n, "/helper": n, "/pool": 2 * n}
	for _, g := range res.Groups {
		if w, ok := want[g.Name]; !ok || g.Count != w || len(shop[g.Name]) != w {
			t.Errorf("group %s: %d requests, Shop timed %d, want %d", g.Name, g.Count, len(shop[g.Name]), w)
		}
		delete(want, g.Name)
		if g.PathMismatch != 0 {
			t.Errorf("%s: %d critical paths do not sum to their latency", g.Name, g.PathMismatch)
		}
		sum := g.Running.Critical // the library's measured CPU on the path
		for _, ts := range g.Terms {
			sum += ts.Critical
		}
		if sum+g.Unknown != int64(math.Round(g.Latency.Mean*float64(g.Count))) && math.Abs(float64(sum+g.Unknown)-g.Latency.Mean*float64(g.Count)) > float64(g.Count) {
			t.Errorf("%s: critical terms and running %d + unknown %d ≠ latency sum %.0f", g.Name, sum, g.Unknown, g.Latency.Mean*float64(g.Count))
		}
		// the event wraps the handler Shop timed
		if shopLat := meanPart2(shop[g.Name]); g.Latency.Mean/1e6 < shopLat {
			t.Errorf("%s: mean latency %.2f ms, less than Shop's own %.2f ms inside it", g.Name, g.Latency.Mean/1e6, shopLat)
		}
	}
	for name := range want {
		t.Errorf("no group %s", name)
	}
	z := jfrtest.Z(shopAlpha / 2)

	type check struct {
		name          string
		group         string
		match         func(budget.Term) bool
		part          string
		critical      bool    // compare the critical time, not the wait
		atLeast       float64 // Shop's configuration: the part lasts at least this (ms)
		rel, absolute float64
		// cpu marks parts with CPU work around the wait (a connect, an
		// HTTP exchange's parsing) that Shop's timer includes and JFR's wait
		// does not: on a shared host that work waits for a CPU and the gap
		// grows with the load (3–13 % measured), so latscope is checked to
		// lie between the configured delay and Shop's timer
		cpu bool
	}
	checks := []check{
		{"serial sleep", "/serial", and(onPath("Shop.serial"), kindIs(frame.Sleep)), "sleep", false, 10, 0.03, 0.5, false},
		{"serial upstream", "/serial", and(onPath("Shop.get"), kindIs(frame.Network)), "upstream", false, 40, 0.05, 1, true},
		{"serial park", "/serial", and(onPath("Shop.serial"), mechIs("java.util.concurrent.locks.LockSupport.parkNanos")), "park", false, 5, 0.03, 0.5, false},
		// the upstream wait is on the executor thread, inside the request
		{"fanout upstream wait", "/fanout", and(onPath("Shop.get"), kindIs(frame.Network)), "upstream", false, 30, 0.05, 1, true},
		// its critical part lasts the 30 ms upstream less the 10 ms sleep beside it at least
		{"fanout upstream critical", "/fanout", and(onPath("Shop.get"), kindIs(frame.Network)), "upstream_critical", true, 20, 0.05, 1, true},
		{"helper a", "/helper", and(onPath("Shop.a"), onPath("Shop$Remote.exec"), kindIs(frame.Network)), "a", false, 10, 0.05, 1, true},
		{"helper b", "/helper", and(onPath("Shop.b"), onPath("Shop$Remote.exec"), kindIs(frame.Network)), "b", false, 20, 0.05, 1, true},
		{"pool acquire", "/pool", and(onPath("Shop.pool"), mechIs("java.util.concurrent.Semaphore.acquire"+jfr.PoolSuffix)), "acquire", false, 0, 0.05, 1, false},
		{"pool sleep", "/pool", and(onPath("Shop.pool"), kindIs(frame.Sleep)), "sleep", false, 10, 0.03, 0.5, false},
	}
	for _, c := range checks {
		g := groupOf(t, res, c.group)
		wait, crit, _, n := termSum(res, g, c.match)
		got := wait
		if c.critical {
			got = crit
		}
		ref, se := meanPartSE(shop[c.group], c.part)
		noise := z * se
		t.Logf("%s: latscope %.2f ms, Shop %.2f ± %.2f ms (%d terms)", c.name, got, ref, noise, n)
		ok := near(got, ref, c.rel, c.absolute+noise)
		if c.cpu || busy {
			// JFR's wait lies inside Shop's timer and lasts the configured
			// delay at least; on busy cores the thread also waits for a CPU
			// after its wait ends, which Shop's timer counts and the wait
			// event does not (measured: up to 9 % of a 5 ms park).
			// A socket read's wait is the exception to "at least": the
			// upstream's delay begins when it has read the request, the
			// wait when the client blocks in its read after writing, so a
			// client preempted between the two on a loaded core waits less
			// than the delay (19.99 ms per request for 20 ms, once in five
			// timing runs with a CPU burner per core). That gap is not
			// timed; a socket read is bounded below by the allowance the
			// recordings' check gives the call's own work instead, 15 % of
			// Shop's timer (TestRecordingLive).
			lo := c.atLeast
			if c.cpu {
				lo = min(lo, 0.85*ref-noise)
			}
			ok = got <= ref+0.05+noise && got >= lo
		}
		if n == 0 || !ok || ref < c.atLeast {
			t.Errorf("%s: latscope %.2f ms per request in %d terms, Shop timed %.2f ms (configured ≥ %g ms); want within %g%% or %g ms (+ %.2f ms, Z(%g/2) standard errors of Shop's mean)",
				c.name, got, n, ref, c.atLeast, 100*c.rel, c.absolute, noise, shopAlpha)
		}
	}
	// removing /fanout's 10 ms sleep saves next to nothing: the upstream
	// branch (≥ 30 ms) runs beside it and is longer
	g := groupOf(t, res, "/fanout")
	if _, crit, fix, _ := termSum(res, g, and(onPath("Shop.fanout"), kindIs(frame.Sleep))); crit < 9 || fix > 0.3*crit {
		t.Errorf("fanout sleep: critical %.2f ms, fix %.2f ms: want the critical 10 ms and a fix well under it", crit, fix)
	}
	// HttpClient's send is a network wait of its caller
	eRef, eSE := meanPartSE(shop["/helper"], "e")
	if w, _, _, n := termSum(res, groupOf(t, res, "/helper"), and(onPath("Shop.e"), kindIs(frame.Network))); n == 0 || w < 15 || w > eRef+0.5+z*eSE {
		t.Errorf("helper e (HttpClient.send): network %.2f ms in %d terms; want ≥ 15 ms (configured) and ≤ Shop's %.2f ms (+ 0.5 + %.2f)", w, n, eRef, z*eSE)
	}
	checkHelperPrediction(t, res, shop["/helper"])
}

// checkHelperPrediction checks shopPredict on /helper: each request saves
// at most the shorter of its two branches, a() and b(), so the mean saves
// something, and at most the shorter of the two branches' means. The
// branches are Shop's own timings of a() and b(): the prediction overlaps
// all of a branch, the CPU around its wait too, so latscope's wait of a
// alone is no bound (`latscope analyze` once predicted a saving of
// 12.05 ms beside a wait of 11.54 ms; the kept recording 12.84 beside
// 12.66, with Shop's a() at 13.31). The bound is widened by 0.5 ms and by
// Z(shopAlpha) standard errors of Shop's own mean of the shorter branch
// over the route's requests: the spread of what the prediction removes.
func checkHelperPrediction(t *testing.T, res *budget.Result, shop []jfrtest.ShopRequest) {
	t.Helper()
	g := groupOf(t, res, "/helper")
	wa, _, _, _ := termSum(res, g, and(onPath("Shop.a"), kindIs(frame.Network)))
	wb, _, _, _ := termSum(res, g, and(onPath("Shop.b"), kindIs(frame.Network)))
	if len(g.Predictions) != 1 || !g.Predictions[0].Matched || wa < 10 || wb < 20 {
		t.Fatalf("/helper: a's wait %.2f ms, b's %.2f ms, predictions %+v", wa, wb, g.Predictions)
	}
	a, seA := meanPartSE(shop, "a")
	b, seB := meanPartSE(shop, "b")
	short, se := a, seA
	if b < a {
		short, se = b, seB
	}
	saved := (g.Latency.Mean - g.Predictions[0].Mean) / 1e6
	bound := short + 0.5 + jfrtest.Z(shopAlpha)*se
	t.Logf("/helper: %s saves %.2f ms of %.2f; a waits %.2f ms (Shop's a() %.2f), b %.2f (b() %.2f); bound %.2f ms",
		shopPredict, saved, g.Latency.Mean/1e6, wa, a, wb, b, bound)
	if saved <= 0 || saved > bound {
		t.Errorf("/helper: mean %.2f ms, predicted %.2f ms: saves %.2f ms, want more than 0 and at most min(Shop's a() %.2f, b() %.2f) + 0.5 + %.2f ms",
			g.Latency.Mean/1e6, g.Predictions[0].Mean/1e6, saved, a, b, bound-short-0.5)
	}
}

// meanPart2 is Shop's mean latency of a route's handler (ms).
func meanPart2(rs []jfrtest.ShopRequest) float64 {
	var s float64
	for _, r := range rs {
		s += float64(r.Latency)
	}
	return s / float64(len(rs)) / 1e6
}

// readAll feeds every event of the recording at path to a new analyzer
// of o, as Read does, without judging the handler's match.
func readAll(t *testing.T, path string, rec *jfr.Recording, o Options) *Analyzer {
	t.Helper()
	a, err := New(o, rec)
	if err != nil {
		t.Fatal(err)
	}
	err = jfr.ReadEvents(context.Background(), path, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: jfr.Events}, func(ev *jfr.Event) error {
		a.Event(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
