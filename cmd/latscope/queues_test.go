package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/jfr/jfrtest"
	"github.com/latscope/latscope/internal/queueing"
)

// TestPredictGolden runs `latscope predict` on the serial fixture trace
// (a real trace of the demo service: 4 clients) and compares its output
// with testdata (go test -update rewrites it).
func TestPredictGolden(t *testing.T) {
	serial := fixtureTrace(t, "serial")
	cases := []struct {
		name string
		args []string
	}{
		{"predict-serial.stdout", []string{"predict", "--clients", "4", "--what-if", "remove=callUpstream",
			"--what-if", "overlap=callUpstream,queryDB", "--what-if", "clients=40", "--what-if", "cores=1", serial}},
		{"predict-serial-open.stdout", []string{"predict", "--open", "--what-if", "rate=100", "--what-if", "rate=10000",
			"--what-if", "cores=1", serial}},
		// the server's workers given (a Go server has none of its own): 4
		// for the 4 clients, then 8 clients on them, then 3 workers
		{"predict-serial-workers.stdout", []string{"predict", "--clients", "4", "--workers", "4", "--what-if", "clients=8",
			"--what-if", "workers=3", serial}},
		{"predict-serial-open-workers.stdout", []string{"predict", "--open", "--workers", "6", "--what-if", "rate=30",
			"--what-if", "workers=4", serial}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := runCLI(t, c.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			golden(t, c.name, stdout)
		})
	}
}

func TestPredictCLI(t *testing.T) {
	serial := fixtureTrace(t, "serial")
	stdout, _, err := runCLI(t, "predict", "--json", "--clients", "4", "--what-if", "remove=callUpstream", serial)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Validation struct {
			Residual float64 `json:"mean_residual_pct"`
		} `json:"validation"`
		Outcomes []struct {
			After struct {
				MeanMs float64 `json:"mean_ms"`
			} `json:"after"`
			P99Note string `json:"p99_note"`
		} `json:"outcomes"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Outcomes) != 1 || v.Outcomes[0].After.MeanMs <= 0 || v.Outcomes[0].P99Note == "" {
		t.Errorf("JSON: %s", stdout)
	}
	bad := []struct {
		args []string
		msg  string
	}{
		{[]string{"predict", "--pool", "x:0", serial}, "NAME:SIZE"},
		{[]string{"predict", "--what-if", "pool=nosuch:2", serial}, "no modelled pool"},
		{[]string{"predict", "--pool", "nosuchframe:2", serial}, "no wait"},
		{[]string{"predict"}, "exactly one trace"},
		{[]string{"predict", "--open", "--clients", "4", serial}, "--clients applies to the closed model"},
		{[]string{"predict", "--rate", "-1", serial}, "-rate"},
		{[]string{"predict", "--clients", "4", "--what-if", "rate=10", serial}, "the model is closed"},
		{[]string{"predict", "--rate", "50", "--what-if", "clients=10", serial}, "the model is open"},
	}
	for _, b := range bad {
		_, _, err := runCLI(t, b.args...)
		if err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%v: err %v, want one saying %q", b.args, err, b.msg)
		}
	}
}

// TestPredictJVM predicts, from the kept recording of internal/jfr/testdata/Svc.java
// at 8 clients (a JDK service of real shape: an intrinsic-hashed ETag, its
// own connection pool of 6, a CPU-bound lock), its throughput at 40 clients,
// and sets it against Svc's own count at 40 clients (svc-40.json; issue #33:
// CPU demand and the lock's hold were 0, the pool's demand 0). The demands
// must be the library's measurements: CPU within 5 % of Svc's own
// ThreadMXBean, the lock's 90–125 % of its own timer of the hold (the hold
// and the time the lock stayed free at a hand-off), the pool's hold (the
// query beneath it) at least 80 % of Svc's borrow → release. The throughput is judged against
// the 10 % bar of the issue; the kept pair was recorded minutes apart on a
// shared host whose load moved (each truth's loadavg), so a miss is logged
// as a known gap with the numbers, not failed.
func TestPredictJVM(t *testing.T) {
	rec, err := jfrtest.Kept("svc", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runCLI(t, "predict", "--json", "--clients", "8", "--pool", "ConnPool.borrow:6", "--pool", "Svc.updateCache:1", "--what-if", "clients=40", rec)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var p queueing.Prediction
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
	own, err := jfrtest.ReadTruth("svc")
	if err != nil {
		t.Fatal(err)
	}
	at40, err := jfrtest.ReadTruth("svc-40")
	if err != nil {
		t.Fatal(err)
	}
	mean := func(tr *jfrtest.Truth, k string) float64 {
		m, _ := tr.Own["mean_ms"].(map[string]any)
		v, _ := m[k].(float64)
		return v
	}
	demand := map[string]float64{}
	for _, r := range p.Model.Resources {
		demand[r.Name] = r.DemandMs
	}
	t.Logf("demands: CPU %.3f ms (Svc's own %.3f), pool %.3f ms (Svc's borrow → release %.3f), lock %.3f ms (Svc's own %.3f)",
		demand["CPU"], mean(own, "cpu"), demand["ConnPool.borrow"], mean(own, "db"), demand["Svc.updateCache"], mean(own, "lock"))
	// the CPU station's demand is the request's CPU and the JVM's CPU
	// outside requests (its in-process clients, the collector, jdk.CPULoad),
	// charged by 1 / (1 − the share of the cores the machine's other
	// processes used, 38 % in this recording: the service's wait for a CPU
	// was longer than its own load explains; queueing's chargeOthers)
	if c := demand["CPU"]*(1-p.Model.OthersShare) - p.Model.OutsideCPUMs; math.Abs(c/mean(own, "cpu")-1) > 0.05 || p.Model.OutsideCPUMs <= 0 || p.Model.OthersShare < 0.3 {
		t.Errorf("CPU demand %.3f ms times 1 − %.3f (the others' share charged) less %.3f outside requests, Svc's own CPU %.3f ms: over 5 %% apart, or no CPU outside, or no others' share", demand["CPU"], p.Model.OthersShare, p.Model.OutsideCPUMs, mean(own, "cpu"))
	}
	// the lock's demand is its hold and the time it stayed free at a
	// contended hand-off (0.2–0.4 ms on this host)
	if l := demand["Svc.updateCache"]; l < 0.9*mean(own, "lock") || l > 1.25*mean(own, "lock") {
		t.Errorf("lock demand %.3f ms, Svc's own hold %.3f ms: want 90–125 %% of it (the hold and its hand-off)", l, mean(own, "lock"))
	}
	for _, r := range p.Model.Resources {
		// the hold's CPU, from the library's latscope.Hold cpuTime
		if r.Name == "Svc.updateCache" && math.Abs(r.HoldCPUMs/mean(own, "lock_cpu")-1) > 0.10 {
			t.Errorf("the lock's hold CPU %.3f ms, Svc's own %.3f ms: over 10 %% apart", r.HoldCPUMs, mean(own, "lock_cpu"))
		}
	}
	if demand["ConnPool.borrow"] < 0.8*mean(own, "db") {
		t.Errorf("pool demand %.3f ms, Svc's own borrow → release %.3f ms", demand["ConnPool.borrow"], mean(own, "db"))
	}
	if len(p.Outcomes) != 1 {
		t.Fatalf("outcomes: %s", stdout)
	}
	// Svc serves with 32 workers (Svc.java's WORKERS, behind
	// ServerQueue.wrap), which the library's events say: at 40 clients 8
	// requests wait for one, outside the request.
	if p.Model.Workers != 32 || p.Model.WorkersFrom != "the server's executor" {
		t.Errorf("workers %d from %q; want Svc's 32 from the server's executor", p.Model.Workers, p.Model.WorkersFrom)
	}
	var engine struct {
		Outcomes []struct {
			Prediction *struct {
				Mean float64 `json:"mean_ms"`
			} `json:"prediction"`
		} `json:"outcomes"`
	}
	if err := json.Unmarshal([]byte(stdout), &engine); err != nil || len(engine.Outcomes) != 1 || engine.Outcomes[0].Prediction == nil {
		t.Fatalf("no engine prediction (%v): %s", err, stdout)
	}
	// Issue #33's bars: the throughput at the saturating concurrency within
	// 10 % of Svc's clients' own count; the mean in the request (the
	// engine's, anchored on the recording) within 10 % of Svc's own timer
	// around its handler, and the wait for a worker beside it.
	pred := p.Outcomes[0].After.RPS
	meas, _ := at40.Own["throughput_recorded_rps"].(float64)
	inTask, ownTask := engine.Outcomes[0].Prediction.Mean, mean(at40, "latency")
	clientMean, _ := at40.Own["client_mean_recorded_ms"].(float64)
	queue := p.Outcomes[0].After.ServerQueueMs
	t.Logf("40 clients: predicted %.1f rps, Svc's clients %.1f rps (%+.1f %%); in the request %.2f ms, Svc's own %.2f ms (%+.1f %%); waiting for a worker %.2f ms, with it %.2f ms against the clients' %.2f ms; recorded at load %s (8 clients) and %s (40)",
		pred, meas, 100*(pred/meas-1), inTask, ownTask, 100*(inTask/ownTask-1), queue, inTask+queue, clientMean, own.Host.LoadBefore, at40.Host.LoadBefore)
	if math.Abs(pred/meas-1) > 0.10 {
		t.Errorf("40 clients: predicted %.1f rps, Svc measured %.1f rps: over 10 %% apart", pred, meas)
	}
	// where the throughput is the lock's bound (part of whose hold was its
	// holder waiting for a core), predict says so with the bound's range
	// (that wait gone, doubled), which must hold Svc's clients' count; in
	// this pair the CPU, charged for the others' share, bounds it first
	// (the lock 90 % busy), and nothing is said
	var lockBusy float64
	for _, u := range p.Outcomes[0].After.Resources {
		if u.Name == "Svc.updateCache" {
			lockBusy = u.Util
		}
	}
	switch r := p.Outcomes[0].AtRisk; {
	case lockBusy >= 0.95 && (r == nil || r.Station != "Svc.updateCache" || meas < r.RPSLow || meas > r.RPSHigh):
		t.Errorf("40 clients, the lock %.0f %% busy: at risk %+v; want the lock's bound with a range holding the measured %.1f rps", 100*lockBusy, r, meas)
	case lockBusy < 0.95 && r != nil:
		t.Errorf("40 clients, the lock %.0f %% busy: at risk %+v; want none", 100*lockBusy, r)
	}
	if math.Abs(inTask/ownTask-1) > 0.10 {
		t.Errorf("40 clients: predicted %.2f ms in the request, Svc's own %.2f ms: over 10 %% apart", inTask, ownTask)
	}
	// 8 of the 40 wait for a worker; the clients' own mean also holds the
	// loopback and the server's dispatcher, before the hand-off the library
	// times, so it is logged above, not compared
	if queue <= 0 {
		t.Errorf("40 clients on 32 workers: %.2f ms waiting for a worker, want some", queue)
	}
}

// TestPredictJVMPoolBySize: a pool given by size alone (--pool 6) in a JVM
// recording is the one the recording waits for, named by its acquire frame
// (ConnPool.borrow), with the same hold as when named (issue #33: it was
// modelled with no demand).
func TestPredictJVMPoolBySize(t *testing.T) {
	rec, err := jfrtest.Kept("svc", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	demand := func(pool string) map[string]float64 {
		stdout, stderr, err := runCLI(t, "predict", "--json", "--clients", "8", "--pool", pool, rec)
		if err != nil {
			t.Fatalf("--pool %s: %v\n%s", pool, err, stderr)
		}
		var p queueing.Prediction
		if err := json.Unmarshal([]byte(stdout), &p); err != nil {
			t.Fatal(err)
		}
		d := map[string]float64{}
		for _, r := range p.Model.Resources {
			d[r.Name] = r.DemandMs
		}
		return d
	}
	named, sized := demand("ConnPool.borrow:6"), demand("6")
	if sized["ConnPool.borrow"] <= 1 || sized["ConnPool.borrow"] != named["ConnPool.borrow"] {
		t.Errorf("--pool 6: %v; --pool ConnPool.borrow:6: %v: want the same hold, the query beneath it", sized, named)
	}
}

// TestJVMPoolBySizeEveryCommand: analyze and compare recognise a pool given
// by size alone in a recording by its acquire frame, as predict does
// (jvmPools; issue #33 item 2: analyze said "pool "connection pool": no
// wait of request type "/order" acquires it"), so --pool 6 predicts what
// --pool ConnPool.borrow:6 does.
func TestJVMPoolBySizeEveryCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec, err := jfrtest.Kept("svc", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"analyze", "compare"} {
		mean := func(pool string) float64 {
			args := []string{cmd, "--json", "--pool", "Svc.updateCache:1", "--pool", pool, "--what-if", "clients=40", rec}
			if cmd == "compare" {
				args = append(args, rec)
			}
			out, _, err := runCLI(t, args...)
			if err := ignoreMiss(err); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			var r struct {
				Groups []struct {
					Predictions []struct {
						Mean float64 `json:"mean_ms"`
					} `json:"predictions"`
				} `json:"groups"`
				Predictions []struct {
					Mean float64 `json:"predicted_mean_ms"`
				} `json:"predictions"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			if cmd == "compare" && len(r.Predictions) == 1 {
				return r.Predictions[0].Mean
			}
			if cmd == "analyze" && len(r.Groups) > 0 && len(r.Groups[0].Predictions) == 1 {
				return r.Groups[0].Predictions[0].Mean
			}
			t.Fatalf("%v: no prediction:\n%s", args, out)
			return 0
		}
		if sized, named := mean("6"), mean("ConnPool.borrow:6"); sized != named || sized == 0 {
			t.Errorf("%s: --pool 6 predicts %.3f ms, --pool ConnPool.borrow:6 %.3f ms: want the same pool", cmd, sized, named)
		}
	}
}

// TestPredictWorkersJVM: a recording whose executor the Java library read
// prints the server's workers as a station and the wait for one; a
// --workers N given overrides it, and workers=N resizes it.
func TestPredictWorkersJVM(t *testing.T) {
	rec, err := jfrtest.Kept("svc", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runCLI(t, "predict", "--clients", "8", "--pool", "6", "--pool", "Svc.updateCache:1", "--what-if", "clients=40", rec)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"server workers         ×32   (the server's executor): at most 32 requests inside",
		"waiting for a worker, outside the request: model", "the server's 32 workers (the server's executor): 0 → ", "server workers   busy"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("predict lacks %q:\n%s", want, stdout)
		}
	}
	stdout, stderr, err = runCLI(t, "predict", "--clients", "8", "--pool", "6", "--pool", "Svc.updateCache:1", "--workers", "16", "--what-if", "workers=64", rec)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"×16   (given)", "workers=64: the server's workers: 16 → 64"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("predict --workers 16 lacks %q:\n%s", want, stdout)
		}
	}
	// the 8-client recording's model misses its own mean by 22.4 % (its CPU
	// charged at the JVM's part of the cores, and each hold's CPU in the
	// CPU's demand and the hold's at once), the 40-client one's by −10.7 %
	// (the executor's queue it recomputes): a prediction from either says
	// so beside its interval
	stdout, stderr, err = runCLI(t, "predict", "--clients", "8", "--pool", "6", "--pool", "Svc.updateCache:1", "--what-if", "workers=8", rec)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if want := "; the model of the trace as recorded is off by +22.4 % (17.7 ms against 14.5 measured)"; !strings.Contains(stdout, want) {
		t.Errorf("predict from svc lacks %q:\n%s", want, stdout)
	}
	at40, err := jfrtest.Kept("svc-40", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err = runCLI(t, "predict", "--pool", "6", "--pool", "Svc.updateCache:1", "--what-if", "workers=8", at40)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if want := "; the model of the trace as recorded is off by -10.7 % (51.9 ms against 58.2 measured)"; !strings.Contains(stdout, want) {
		t.Errorf("predict from svc-40 lacks %q:\n%s", want, stdout)
	}
	for _, args := range [][]string{{"--workers", "-1"}, {"--workers", "5001"}, {"--what-if", "workers=0"}, {"--what-if", "workers=x"}} {
		_, stderr, err := runCLI(t, append(append([]string{"predict", "--clients", "8", "--pool", "6", "--pool", "Svc.updateCache:1"}, args...), rec)...)
		if err == nil || !strings.Contains(stderr+err.Error(), "workers") {
			t.Errorf("predict %v: %v %s; want an error naming workers", args, err, stderr)
		}
	}
}
