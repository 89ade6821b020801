package jvm

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/jfr"
	jvma "github.com/latscope/latscope/internal/jvm" // the JVM request analysis (this package is the lab scenario)
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/internal/units"
)

// ModeRun is one measured mode of the seed endpoint.
type ModeRun struct {
	Mode      string      `json:"mode"`
	Load      LoadSummary `json:"load"`
	Recording string      `json:"recording"`
	Results   string      `json:"results"`
	// Counted is the requests of the load inside the recording (jfr's
	// CountRequests); MeanMs their mean latency, the measured mean.
	Counted int     `json:"counted_requests"`
	MeanMs  float64 `json:"mean_ms"`
	// EdgePct is the error the window's edges can cause in a per-request
	// figure: without request mode half the requests cut by an edge over
	// the counted (docs/jfr.md); in request mode the requests in flight at
	// the recording's start over the counted (their earlier waits are not
	// in it).
	EdgePct  float64 `json:"edge_error_pct"`
	StdDevMs float64 `json:"stddev_ms"`
	// MeanSEMs is the standard error of MeanMs by batch means over the same
	// requests in the order they ended (autocorrelation included), on
	// MeanDF degrees of freedom; 0 in a run saved before it was kept (the
	// checks then take StdDevMs/√n).
	MeanSEMs float64 `json:"mean_se_ms,omitempty"`
	MeanDF   float64 `json:"mean_se_df,omitempty"`
	// CPUPerMs is the process's utime+stime over the window per request
	// the service served in it (its own counter): the independent CPU.
	CPUMs    float64 `json:"process_cpu_ms"`
	CPUPerMs float64 `json:"cpu_per_request_ms"`
	// Own are the service's own timings per request over the window (ms).
	Own Own `json:"own_ms"`
	// JFR is the analysis of the recording, per request (ms).
	JFR      Budget   `json:"jfr"`
	Findings []string `json:"findings"`
	// Command analyses the recording by hand.
	Command string `json:"command"`
}

// LoadSummary is the client side of a run (every measured request).
type LoadSummary struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	RPS      float64 `json:"rps"`
	MeanMs   float64 `json:"mean_ms"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
}

// Own are the service's System.nanoTime timings, per request (ms).
type Own struct {
	Requests int64   `json:"requests"`
	Total    float64 `json:"total"`
	CPU      float64 `json:"cpu"`
	Upstream float64 `json:"upstream"`
	DB       float64 `json:"db"`
	Pool     float64 `json:"pool"`
	Shared   float64 `json:"shared"`
	Lock     float64 `json:"lock"`
	Await    float64 `json:"await"`
}

// Budget is what the JFR analysis found, per request (ms).
type Budget struct {
	// RequestMode is set when the analysis found the library's
	// latscope.Request events (one group per route, exact boundaries,
	// critical path across the marked hand-offs); else it is the waits
	// beneath the handler frame, per request counted from the load.
	RequestMode bool    `json:"request_mode"`
	Group       string  `json:"group"`
	Count       int     `json:"requests"`
	MeanMs      float64 `json:"mean_ms"` // request mode: the events' mean latency
	// Critical is the sum of the terms' critical-path time (handler mode:
	// equal to WaitSum).
	Critical float64 `json:"critical"`
	// Predictions are the analysis's own, by spec (request mode).
	Predictions map[string]float64 `json:"predictions,omitempty"`
	Terms       []TermMs           `json:"terms"`
	// WaitSum is every wait beneath the handler; Upstream, DBNetwork,
	// PoolWait and Lock the terms of the segments.
	WaitSum   float64 `json:"wait_sum"`
	Upstream  float64 `json:"upstream"`
	DBNetwork float64 `json:"db_network"`
	PoolWait  float64 `json:"pool_wait"`
	Lock      float64 `json:"lock"`
	Await     float64 `json:"await"`
	// CPUSamples are the execution samples beneath the handler, by
	// application frame.
	CPUSamples map[string]int `json:"cpu_samples"`
	// Wall is the waits by application frame (ms per request).
	Wall map[string]float64 `json:"wall"`
	// Outside is wait time outside any request (ms in all, never divided).
	OutsideMs float64 `json:"outside_ms"`
}

// TermMs is one term of the budget.
type TermMs struct {
	Path       string     `json:"path"`
	Mechanism  string     `json:"mechanism"`
	Kind       frame.Kind `json:"kind"`
	Ms         float64    `json:"ms"`
	CriticalMs float64    `json:"critical_ms"`
}

// BurstRun is one run of the burst path.
type BurstRun struct {
	Variant     string      `json:"variant"`
	Batch       int         `json:"batch"`
	Load        LoadSummary `json:"load"`
	Recording   string      `json:"recording"`
	Counted     int         `json:"counted_requests"`
	MeanMs      float64     `json:"mean_ms"`
	StdDevMs    float64     `json:"stddev_ms"`
	CPUMs       float64     `json:"process_cpu_ms"`
	CPUPerMs    float64     `json:"cpu_per_request_ms"`
	Served      int64       `json:"served"`
	ForksPerReq float64     `json:"tasks_per_request"`
	OwnMs       float64     `json:"own_ms"`
	JFR         Budget      `json:"jfr"`
	Churn       ChurnResult `json:"churn"`
	Findings    []string    `json:"findings"`
	Command     string      `json:"command"`
}

// ChurnResult is the scheduler-churn analysis of a recording
// (sched.JVMChurn).
type ChurnResult struct {
	Flagged bool    `json:"flagged"` // the sched-overhead finding fired
	Verdict string  `json:"verdict"`
	Share   float64 `json:"share_pct"`
	Low     float64 `json:"share_low_pct"`
	High    float64 `json:"share_high_pct"`
	Samples int64   `json:"samples"`
	// RulePct is the share above which the analysis flags churn
	// (docs/method.md §9); 0 in a run saved before it was kept: 10 %.
	RulePct float64 `json:"rule_pct,omitempty"`
	Finding string  `json:"finding,omitempty"`
}

// churnResult is the JVM scheduler-churn analysis of a recording (run by
// analyse beside the budget): the share of execution samples in
// ForkJoinPool and thread-pool machinery against the 10 % rule
// (docs/method.md §9).
func churnResult(rep *sched.JVMReport) ChurnResult {
	out := ChurnResult{Verdict: rep.Verdict(), Share: units.Round3(100 * rep.Share), Low: units.Round3(100 * rep.Low), High: units.Round3(100 * rep.High), Samples: rep.Samples,
		RulePct: units.Round3(100 * rep.Thresholds.SchedShare)}
	for _, f := range rep.Findings() {
		if f.Kind == sched.FindSchedOverhead {
			out.Flagged, out.Finding = true, f.Text
		}
	}
	return out
}

// mode runs one mode of the seed endpoint.
func (r *runner) mode(ctx context.Context, mode string) (*ModeRun, error) {
	p, err := r.service(ctx, "svc-"+mode, "--mode", mode)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	w, err := r.measure(ctx, p, mode, "/work", r.env.Profile.Clients, 0, max(r.env.Profile.Warmup, jvmWarmup), max(r.env.Profile.Window, minWindow))
	if err != nil {
		return nil, err
	}
	mr := &ModeRun{Mode: mode, Load: summarize(w.Load), Recording: rel(r.env.Out, w.Recording), Results: rel(r.env.Out, w.Results),
		CPUMs: units.Ms(w.CPU), Own: own(w.Own)}
	if w.Own.Requests > 0 {
		mr.CPUPerMs = units.Round3(mr.CPUMs / float64(w.Own.Requests))
	}
	specs := map[string][]string{"serial": SerialPredictions, "concurrent": SerialPredictions[1:]}[mode]
	q, res, ch, err := analyse(ctx, w, Handler, specs...)
	if err != nil {
		return nil, err
	}
	mr.Counted, mr.MeanMs, mr.StdDevMs, mr.EdgePct = q.Count, meanMs(q.Latencies), stddevMs(q.Latencies), edgePct(q)
	mr.MeanSEMs, mr.MeanDF = meanSE(q.Latencies)
	mr.JFR = budgetOf(res, "/work")
	if mr.JFR.RequestMode {
		// Exact request boundaries: the events' own latencies, no edge error.
		mr.MeanMs, mr.StdDevMs, mr.MeanSEMs, mr.MeanDF = mr.JFR.MeanMs, 0, 0, 0
		if g := groupOf(res, "/work"); g != nil {
			mr.StdDevMs = stddevMs(g.Latencies)
			mr.MeanSEMs, mr.MeanDF = meanSE(g.Latencies)
		}
		// The analysis counts the requests that were in flight when the
		// recording started (their events commit at their end, inside
		// it), but JFR never saw their waits before the start: per-request
		// waits read low by up to their share.
		mr.EdgePct = 0
		if n, err := inFlightAt(w.Results, w.RecStart); err == nil && mr.JFR.Count > 0 {
			mr.EdgePct = units.Round3(100 * float64(n) / float64(mr.JFR.Count))
		}
	}
	mr.Findings = findingTexts(res, ch)
	mr.Command = command(mr.JFR.RequestMode, Handler, mr.Results, mr.Recording, specs)
	r.env.Logf("%s: %d requests, %.1f/s, mean %.1f ms (%d in the recording); JFR waits %.1f ms/request; CPU %.2f ms/request",
		mode, mr.Load.Requests, mr.Load.RPS, mr.Load.MeanMs, mr.Counted, mr.JFR.WaitSum, mr.CPUPerMs)
	return mr, nil
}

// burst runs one variant of the burst path.
func (r *runner) burst(ctx context.Context, variant string) (*BurstRun, error) {
	batch := 1
	if variant == "batched" {
		batch = r.cfg.BurstBatch
	}
	p, err := r.service(ctx, "svc-burst-"+variant, "--mode", "serial", "--burst-batch", strconv.Itoa(batch))
	if err != nil {
		return nil, err
	}
	defer p.stop()
	// churn.jfc samples every millisecond: the churn share is judged on at
	// least 50 samples, and the pool's threads run Java code only briefly.
	w, err := r.measure(ctx, p, "burst-"+variant, "/burst", r.cfg.BurstClients, r.cfg.BurstThink, max(r.env.Profile.Warmup, burstWarmup),
		min(max(r.env.Profile.Window, minBurstWindow), maxBurstWindow), r.tools.churnJFC)
	if err != nil {
		return nil, err
	}
	br := &BurstRun{Variant: variant, Batch: batch, Load: summarize(w.Load), Recording: rel(r.env.Out, w.Recording), CPUMs: units.Ms(w.CPU),
		Served: w.Own.BurstRequests}
	if n := w.Own.BurstRequests; n > 0 {
		br.CPUPerMs = units.Round3(br.CPUMs / float64(n))
		br.ForksPerReq = units.Round3(float64(w.Own.BurstForks) / float64(n))
		br.OwnMs = units.Round3(float64(w.Own.BurstNs) / float64(n) / 1e6)
	}
	q, res, ch, err := analyse(ctx, w, BurstHandler)
	if err != nil {
		return nil, err
	}
	br.Counted, br.MeanMs, br.StdDevMs = q.Count, meanMs(q.Latencies), stddevMs(q.Latencies)
	br.JFR = budgetOf(res, "/burst")
	if br.JFR.RequestMode {
		br.MeanMs = br.JFR.MeanMs
	}
	br.Findings = findingTexts(res, ch)
	br.Churn = churnResult(ch)
	br.Command = command(br.JFR.RequestMode, BurstHandler, rel(r.env.Out, w.Results), br.Recording, nil)
	r.env.Logf("burst %s: %d requests, %.1f/s, mean %.3f ms; CPU %.3f ms/request", variant, br.Load.Requests, br.Load.RPS, br.Load.MeanMs, br.CPUPerMs)
	return br, nil
}

// analyse counts the load's requests inside the recording and runs the
// JFR analysis (package jvm, as `latscope analyze` does): in request mode
// when the recording has the library's latscope.Request events, with the
// predictions specs; else beneath handler. The same read of the events
// feeds the scheduler-churn analysis (sched.JVMChurn).
func analyse(ctx context.Context, w *window, handler string, specs ...string) (jvma.Requests, *budget.Result, *sched.JVMReport, error) {
	q, res, ch, _, err := analyseWith(ctx, w, handler, specs...)
	return q, res, ch, err
}

// analyseWith is analyse that also returns the analyzer: its request CPU,
// the CPU inside holds and the holds' hand-offs, which the prediction
// engine's demands read (saturate.go).
func analyseWith(ctx context.Context, w *window, handler string, specs ...string) (jvma.Requests, *budget.Result, *sched.JVMReport, *jvma.Analyzer, error) {
	rec, err := jfr.ReadRecording(w.Recording)
	if err != nil {
		return jvma.Requests{}, nil, nil, nil, err
	}
	w.RecStart = rec.Start()
	f, err := os.Open(w.Results)
	if err != nil {
		return jvma.Requests{}, nil, nil, nil, err
	}
	defer f.Close()
	q, err := jvma.CountRequests(loadgen.NewDecoder(f), rec.Start(), rec.End())
	if err != nil {
		return q, nil, nil, nil, fmt.Errorf("%s: %w", w.Results, err)
	}
	opts := jvma.DefaultOptions
	opts.Handler, opts.Load = handler, &q
	for _, spec := range specs {
		p, err := budget.ParsePrediction(spec)
		if err != nil {
			return q, nil, nil, nil, err
		}
		opts.Predictions = append(opts.Predictions, p)
	}
	rules := opts.Rules
	ch := sched.NewJVMChurn(sched.JVMOptions{Recording: rec, Rules: &rules})
	a, err := jvma.Read(ctx, w.Recording, rec, opts, ch.Event) // one read for both
	if err != nil {
		return q, nil, nil, nil, err
	}
	return q, a.Finalize(), ch.Result(), a, nil
}

// command is the `latscope analyze` command that gives the same analysis of
// a recording by hand: in request mode it needs no handler and no load
// results.
func command(requestMode bool, handler, results, recording string, specs []string) string {
	var b strings.Builder
	b.WriteString("latscope analyze")
	if !requestMode {
		fmt.Fprintf(&b, " --handler %s --requests-from %s", handler, results)
	}
	for _, s := range specs {
		fmt.Fprintf(&b, " --what-if %s", s)
	}
	fmt.Fprintf(&b, " %s", recording)
	return b.String()
}

// groupOf returns the group named name, or nil.
func groupOf(res *budget.Result, name string) *budget.Group {
	for _, g := range res.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// inFlightAt counts the load's results (warm-up included) that began
// before t and ended after it.
func inFlightAt(results string, t time.Time) (int, error) {
	f, err := os.Open(results)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := loadgen.NewDecoder(f)
	n := 0
	for {
		var r loadgen.Result
		if err := dec(&r); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		if r.Start.Before(t) && r.End().After(t) {
			n++
		}
	}
}

// edgePct is half the requests cut by the recording's edges over the
// counted, in %: the error of per-request figures docs/jfr.md states.
func edgePct(q jvma.Requests) float64 {
	if q.Count == 0 {
		return 0
	}
	return units.Round3(100 * float64(q.EdgeCounted+q.Before+q.After) / 2 / float64(q.Count))
}

// budgetOf reduces the analysis to the scenario's terms, per request: the
// group of route in request mode, else the handler's group.
func budgetOf(res *budget.Result, route string) Budget {
	b := Budget{CPUSamples: map[string]int{}, Wall: map[string]float64{}, Predictions: map[string]float64{}}
	if len(res.Groups) == 0 {
		return b
	}
	g := res.Groups[0]
	for _, x := range res.Groups {
		if x.Name == route {
			g, b.RequestMode = x, true
		}
	}
	b.Group, b.Count = g.Name, g.Count
	if b.RequestMode {
		b.MeanMs = units.Round3(g.Latency.Mean / 1e6)
	}
	n := float64(max(g.Count, 1))
	per := func(ns int64) float64 { return units.Round3(float64(ns) / n / 1e6) }
	for _, ts := range g.Terms {
		t := res.Terms[ts.Term]
		ms := per(ts.Wait)
		b.Terms = append(b.Terms, TermMs{Path: pathString(t), Mechanism: t.Mechanism, Kind: t.Kind, Ms: ms, CriticalMs: per(ts.Critical)})
		b.WaitSum += ms
		b.Critical += per(ts.Critical)
		switch {
		case onPath(t, "callUpstream") && t.Kind == frame.Network:
			b.Upstream += ms
		case onPath(t, "queryDb") && t.Kind == frame.Network:
			b.DBNetwork += ms
		case onPath(t, "queryDb"):
			b.PoolWait += ms
		case onPath(t, "sharedSection") || onPath(t, "sharedSectionFixed"):
			b.Lock += ms
		case onPath(t, "handle") && t.Kind != frame.Network:
			b.Await += ms
		}
	}
	b.WaitSum, b.Critical = units.Round3(b.WaitSum), units.Round3(b.Critical)
	for _, p := range g.Predictions {
		if p.Matched {
			b.Predictions[p.Spec] = units.Round3(p.Mean / 1e6)
		}
	}
	for _, reg := range g.Regions {
		name := shortFrame(reg.Name)
		b.CPUSamples[name] += reg.CPUSamples
		b.Wall[name] = units.Round3(b.Wall[name] + per(reg.Wall))
	}
	var out int64
	for _, v := range res.Outside.ByKind {
		out += v
	}
	b.OutsideMs = units.Round3(float64(out) / 1e6)
	return b
}

// onPath reports whether the term's call path has a frame named name.
func onPath(t budget.Term, name string) bool {
	for _, f := range t.Path {
		if jvma.MatchFrame(f, name) || jvma.MatchFrame(f, name+"$") {
			return true
		}
	}
	return t.Frame != "" && jvma.MatchFrame(t.Frame, name)
}

// pathString is the term's call path without the lambda proxies the JVM
// generates (JvmService$$Lambda$67+0x…: their names change from one JVM
// to the next) and without the package.
func pathString(t budget.Term) string {
	if len(t.Path) == 0 {
		if t.Frame == "" {
			return "(no application frame)"
		}
		return shortFrame(t.Frame)
	}
	var parts []string
	for _, f := range t.Path {
		if strings.Contains(f, "$$Lambda$") {
			continue
		}
		parts = append(parts, shortFrame(f))
	}
	return strings.Join(parts, " › ")
}

// shortFrame drops the package: latscopelab.JvmService.queryDb → JvmService.queryDb.
func shortFrame(f string) string {
	const pkg = "latscopelab."
	if len(f) > len(pkg) && f[:len(pkg)] == pkg {
		return f[len(pkg):]
	}
	return f
}

// findingTexts are the budget's findings and the churn analysis's
// verdict, last.
func findingTexts(res *budget.Result, ch *sched.JVMReport) []string {
	var out []string
	for _, w := range res.Warnings {
		out = append(out, w.Error())
	}
	return append(out, ch.Verdict())
}

func own(s ownStats) Own {
	o := Own{Requests: s.Requests}
	if s.Requests == 0 {
		return o
	}
	per := func(ns int64) float64 { return units.Round3(float64(ns) / float64(s.Requests) / 1e6) }
	o.Total, o.CPU, o.Upstream, o.DB, o.Pool = per(s.TotalNs), per(s.CPUNs), per(s.UpstreamNs), per(s.DBNs), per(s.PoolNs)
	o.Shared, o.Lock, o.Await = per(s.SharedNs), per(s.LockNs), per(s.AwaitNs)
	return o
}

func summarize(r *loadgen.Report) LoadSummary {
	l := r.Latency
	return LoadSummary{Requests: r.Requests, Errors: r.Errors, RPS: units.Round3(r.RPS), MeanMs: units.Ms(l.Mean), P50Ms: units.Ms(l.P50), P99Ms: units.Ms(l.P99)}
}

func meanMs(lat []int64) float64 {
	if len(lat) == 0 {
		return 0
	}
	var s float64
	for _, l := range lat {
		s += float64(l)
	}
	return units.Round3(s / float64(len(lat)) / 1e6)
}

// meanSE is the standard error (ms) of the mean of lat, requests in the
// order they ended, by batch means, and its degrees of freedom; 0, 0 with
// too few requests.
func meanSE(lat []int64) (se, df float64) {
	xs := make([]float64, len(lat))
	for i, l := range lat {
		xs[i] = float64(l) / 1e6
	}
	m := stats.BatchMeans(xs)
	if !m.OK() {
		return 0, 0
	}
	return units.Round3(m.SE), m.DF()
}

func stddevMs(lat []int64) float64 {
	if len(lat) < 2 {
		return 0
	}
	m := meanMs(lat) * 1e6
	var s float64
	for _, l := range lat {
		d := float64(l) - m
		s += d * d
	}
	return units.Round3(math.Sqrt(s/float64(len(lat)-1)) / 1e6)
}

// rel returns path relative to dir, for the JSON and the commands.
func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
