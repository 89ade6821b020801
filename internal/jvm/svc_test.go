package jvm

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/tier"
)

// analyseSvc analyses a kept recording of internal/jfr/testdata/Svc.java in request
// mode and returns its truth.
func analyseSvc(t *testing.T, name string) (*budget.Result, *Analyzer, *jfrtest.Truth) {
	t.Helper()
	tr, err := jfrtest.ReadTruth(name)
	if err != nil {
		t.Fatal(err)
	}
	a := keptAnalyzer(t, name)
	return a.Finalize(), a, tr
}

// keptAnalyzer returns an Analyzer with DefaultOptions that has read every
// event of the kept recording name, not yet finalized.
func keptAnalyzer(t *testing.T, name string) *Analyzer {
	t.Helper()
	path, err := jfrtest.Kept(name, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := jfr.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, path, rec, DefaultOptions)
}

// ownMean is Svc's own mean of a part (ms) over the requests that began
// inside the recording (its truth's own.mean_ms).
func ownMean(t *testing.T, tr *jfrtest.Truth, part string) float64 {
	t.Helper()
	m, _ := tr.Own["mean_ms"].(map[string]any)
	v, ok := m[part].(float64)
	if !ok {
		t.Fatalf("%s: no own.mean_ms.%s", tr.Recording, part)
	}
	return v
}

// TestSvcCPU checks the request CPU the Java library measures (ThreadMXBean
// at the request's begin and end, the events' cpuTime) against Svc's own
// ThreadMXBean timer around the library's filter, on the kept recordings of
// a service whose CPU is SHA-256 (an intrinsic JFR's sampler leaves almost
// unsampled: issue #33 found sampled CPU at 7–31 % of the real). Want: within
// 5 % of Svc's own mean (the two instruments enclose the same work; they
// differ by the requests at the recording's edges and the library's own
// filter); and the hold of the lock and of the pool by their own timers.
func TestSvcCPU(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"svc", "svc-fixed", "svc-40"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, a, tr := analyseSvc(t, name)
			if !a.RequestCPUExact {
				t.Fatalf("request CPU not exact: the library's cpuTime is missing")
			}
			n, samples := 0, 0
			var held float64
			for _, g := range res.Groups {
				n += g.Count
				samples += g.CPUSamples
				held += a.HeldCPU[g.Name].Seconds()
			}
			lib := (a.RequestCPU + held) / float64(n) * 1e3
			own := ownMean(t, tr, "cpu")
			t.Logf("%s: request CPU %.3f ms (library), %.3f ms (Svc's own ThreadMXBean): %+.1f %%; %d execution samples = %.3f ms", name, lib, own, 100*(lib/own-1), samples, float64(samples)*10/float64(n))
			if math.Abs(lib/own-1) > 0.05 {
				t.Errorf("request CPU %.3f ms, Svc's own %.3f ms: over 5 %% apart", lib, own)
			}
			if s := float64(samples) * 10 / float64(n); s > lib/2 {
				t.Errorf("execution samples say %.3f ms of %.3f: the intrinsic should leave them far below", s, lib)
			}
			var lock, pool, wait float64
			for _, ts := range res.Groups[0].Terms {
				term := res.Terms[ts.Term]
				per := float64(ts.Critical) / float64(res.Groups[0].Count) / 1e6
				switch {
				case term.Kind == frame.Running && strings.HasSuffix(term.Mechanism, " cache"):
					lock += per
				case term.Matches("ConnPool.borrow") && strings.Contains(term.Mechanism, "pool wait"):
					wait += per // the wait for a connection
				case term.Matches("ConnPool.borrow"):
					pool += per // the hold: the query beneath it and its CPU
				}
			}
			db := ownMean(t, tr, "db")
			t.Logf("%s: lock hold %.3f ms (Svc's own %.3f inside the section); pool wait + hold %.3f + %.3f ms (Svc's own borrow → release %.3f, the wait for a connection included)", name, lock, ownMean(t, tr, "lock"), wait, pool, db)
			if tr.Config["mode"] == "locked" && math.Abs(lock/ownMean(t, tr, "lock")-1) > 0.10 {
				t.Errorf("lock hold %.3f ms, Svc's own %.3f ms: over 10 %% apart", lock, ownMean(t, tr, "lock"))
			}
			// Svc's timer runs from before borrow to after release, so it
			// encloses the wait and the hold: 10 % as for the lock
			if math.Abs((wait+pool)/db-1) > 0.10 {
				t.Errorf("pool wait + hold %.3f ms, Svc's own borrow → release %.3f ms: over 10 %% apart", wait+pool, db)
			}
		})
	}
}

// TestSvcServerQueue checks the time outside the request (the server's
// executor queue, io.latscope.ServerQueue) against the clients' own mean
// latency: at 40 clients on 32 workers the request's own latency misses a
// quarter of what the clients see. Want: the server queue never overshoots
// that gap and, at 40 clients, closes at least half of it; the rest is what no server-side
// hook sees — the server's dispatcher (accept, select) before the hand-off,
// the clients' own work in the same JVM, loopback — and it grows with the
// host's load (the clients and the dispatcher wait for a core).
func TestSvcServerQueue(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"svc", "svc-40"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, a, tr := analyseSvc(t, name)
			_ = a
			client, _ := tr.Own["client_mean_recorded_ms"].(float64)
			if client <= 0 {
				t.Fatalf("no client_mean_recorded_ms in %s.json", name)
			}
			var text string
			for _, w := range res.Warnings {
				if f, ok := w.(*budget.Finding); ok && strings.Contains(f.Text, "server queue") {
					text = f.Text
				}
			}
			if text == "" {
				t.Fatal("no server-queue finding")
			}
			g := res.Groups[0]
			var q float64
			for _, r := range a.req.requests {
				if r.queue >= 0 && r.start >= a.rec.Start().UnixNano() && r.end > r.start {
					q += float64(r.queue)
				}
			}
			q /= float64(g.Count) * 1e6
			inner := g.Latency.Mean / 1e6
			t.Logf("%s: clients' mean %.2f ms; request %.2f ms (%+.1f %%), with the server queue %.2f ms %.2f ms (%+.1f %%)", name, client, inner, 100*(inner/client-1), q, inner+q, 100*((inner+q)/client-1))
			if gap := client - inner; q > gap || name == "svc-40" && q < gap/2 {
				t.Errorf("server queue %.2f ms of a gap of %.2f ms between the request (%.2f ms) and the clients (%.2f ms): want at least half of it, and no more", q, gap, inner, client)
			}
		})
	}
}

// svcAlpha is the level of each live check of Svc: two checks a run, so at
// most 2 × 0.001 that a run of a correct analysis fails by chance.
const svcAlpha = 0.001

// TestSvcLive records Svc live (8 clients, the lock's hashing inside it)
// and checks the library's request CPU and the lock's hold against Svc's
// own ThreadMXBean and nanoTime timers: within 5 % (10 % for the hold),
// widened by Z(α/2) standard errors of Svc's own mean, α = svcAlpha.
func TestSvcLive(t *testing.T) {
	tier.Timing(t)
	checkSvcLive(t)
}

// TestSvcBusy is TestSvcLive with a CPU burner on each of two cores (`yes`):
// the library's thread CPU clock does not count the time a thread waits for
// a core, and neither does Svc's, so they agree as on a quiet host, where
// JFR's samples (and a wall clock) would not.
func TestSvcBusy(t *testing.T) {
	tier.Timing(t)
	for range 2 {
		cmd := exec.Command("yes")
		if err := cmd.Start(); err != nil {
			t.Skip("LOUD SKIP: cannot start a CPU burner (yes): ", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	checkSvcLive(t)
}

func checkSvcLive(t *testing.T) {
	t.Helper()
	o := jfrtest.SvcOptions{Dir: t.TempDir(), Name: "svc", Clients: 8, Mode: "locked", Run: 6 * time.Second, Delay: 3 * time.Second, Length: 2 * time.Second, Nice: os.Geteuid() == 0}
	run, err := jfrtest.RecordSvc(context.Background(), o)
	if errors.Is(err, jfrtest.ErrNoJDK) {
		t.Skip("LOUD SKIP: ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rec, err := jfr.ReadRecording(run.Recording)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(DefaultOptions, rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := jfr.ReadEvents(context.Background(), run.Recording, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: jfr.Events}, func(ev *jfr.Event) error {
		a.Event(ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res := a.Finalize()
	if !a.RequestCPUExact || len(res.Groups) == 0 {
		t.Fatal("no exact request CPU")
	}
	reqs, err := jfrtest.ReadSvc(run.Results)
	if err != nil {
		t.Fatal(err)
	}
	var cpu, lock []float64
	for _, q := range reqs {
		if q.Start >= rec.Start().UnixNano() && q.Start <= rec.End().UnixNano() {
			cpu = append(cpu, float64(q.CPU)/1e6)
			lock = append(lock, float64(q.Lock)/1e6)
		}
	}
	g := res.Groups[0]
	lib := (a.RequestCPU + a.HeldCPU[g.Name].Seconds()) / float64(g.Count) * 1e3
	var hold float64
	for _, ts := range g.Terms {
		if tm := res.Terms[ts.Term]; tm.Kind == frame.Running && strings.HasSuffix(tm.Mechanism, " cache") {
			hold += float64(ts.Critical) / float64(g.Count) / 1e6
		}
	}
	z := jfrtest.Z(svcAlpha / 2)
	for _, c := range []struct {
		what      string
		got, band float64
		own       []float64
	}{{"request CPU", lib, 0.05, cpu}, {"lock hold", hold, 0.10, lock}} {
		m, se := jfrtest.MeanSE(c.own)
		t.Logf("%s: latscope %.3f ms, Svc's own %.3f ± %.3f ms (%d requests)", c.what, c.got, m, se, len(c.own))
		if math.Abs(c.got-m) > c.band*m+z*se {
			t.Errorf("%s %.3f ms, Svc's own %.3f ± %.3f ms: outside %.0f %% + %.1f standard errors", c.what, c.got, m, se, 100*c.band, z)
		}
	}
}

// TestSvcRecorderStartup reads a recording started with jcmd JFR.start 12 s
// into Svc's load at 40 clients (svc-jcmd: jcmd took 3.5 s, the recording
// began 15.6 s after the JVM). Svc's own clients counted 79 completions in
// the second the recording began against about 400 in the others (issue
// #33: JFR.start stalled services 0.9–16.9 s). Want: the slow first requests
// are put down to the recorder's start-up, excluded, and no warm-up advice
// (which the recording, past jvm.WarmupGap, does not need).
func TestSvcRecorderStartup(t *testing.T) {
	t.Parallel()
	res, a, tr := analyseSvc(t, "svc-jcmd")
	var startup, warmup string
	for _, w := range res.Warnings {
		if f, ok := w.(*budget.Finding); ok && f.Kind == budget.FindWarmup {
			if strings.Contains(f.Text, "recorder's own start-up") {
				startup = f.Text
			} else {
				warmup = f.Text
			}
		}
	}
	t.Log(startup)
	if startup == "" || warmup != "" {
		t.Errorf("start-up finding %q, warm-up finding %q: want the first, not the second", startup, warmup)
	}
	if !strings.Contains(startup, "(jvm.WarmupGap 10s)") {
		t.Errorf("start-up finding %q does not name jvm.WarmupGap, the constant's package since the move", startup)
	}
	ps, _ := tr.Own["per_second"].([]any)
	gap := a.rec.Start().Sub(a.env.jvmStart).Seconds()
	var counts []float64
	for _, p := range ps {
		counts = append(counts, p.(float64))
	}
	i := int(gap) // Svc's seconds count from its main, a fraction after the JVM's start
	if i < 1 || i+1 >= len(counts) {
		t.Fatalf("recording began %.1f s after the JVM, outside Svc's %d seconds", gap, len(counts))
	}
	sorted := slices.Sorted(slices.Values(counts))
	median := sorted[len(sorted)/2]
	dip := min(counts[i-1], counts[i], counts[i+1])
	t.Logf("Svc's completions around the recording's start (%.1f s): %v; median %v", gap, counts[i-1:i+2], median)
	if dip > median/2 {
		t.Errorf("no stall in Svc's own count around the recording's start: %v against a median of %v", counts[i-1:i+2], median)
	}
	g := res.Groups[0]
	if g.ExcludedBefore <= 32 { // one request in flight per client, and the excluded start-up
		t.Errorf("%d requests excluded: want the start-up's beyond the 40 in flight", g.ExcludedBefore)
	}
}
