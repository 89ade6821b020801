package jvm

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"

	"github.com/latscope/latscope/internal/report/markdown"
	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/internal/units"
	"github.com/latscope/latscope/lab"
)

// Result is the scenario's JSON output.
type Result struct {
	Profile lab.Profile `json:"profile"`
	Config  ConfigJSON  `json:"config"`
	Runs    []*ModeRun  `json:"runs"`
	Bursts  []*BurstRun `json:"bursts"`
	// Saturate is the saturation path (/lock); nil in a run saved before
	// it was kept.
	Saturate    *SaturateRun      `json:"saturate,omitempty"`
	Disagree    []SegmentShare    `json:"profile_disagreement"`
	Predictions []PredictionCheck `json:"predictions"`
	// PredictionSource says where the predictions come from: the terms of
	// the serial recording by the rule of docs/method.md §5, computed here,
	// until the JVM analysis predicts by itself.
	PredictionSource string `json:"prediction_source"`
	// RequestMode: the analysis read the library's latscope.Request events
	// (exact request boundaries, the critical path across hand-offs).
	RequestMode bool        `json:"request_mode"`
	Findings    []string    `json:"findings"`
	Checks      []lab.Check `json:"checks"`
}

// ConfigJSON is the configuration in milliseconds.
type ConfigJSON struct {
	UpstreamMs     float64 `json:"upstream_delay_ms"`
	DBMs           float64 `json:"db_delay_ms"`
	Pool           int     `json:"pool"`
	CPUMs          float64 `json:"cpu_ms"`
	SharedMs       float64 `json:"shared_ms"`
	BurstTasks     int     `json:"burst_tasks"`
	BurstBatch     int     `json:"burst_batch"`
	BurstParallel  int     `json:"burst_parallelism"`
	BurstTaskNs    float64 `json:"burst_task_ns"`
	BurstClients   int     `json:"burst_clients"`
	BurstThinkMs   float64 `json:"burst_think_ms"`
	LoadAvgAtStart float64 `json:"load_average_at_start"`
}

// SegmentShare is one segment's share in the two views of the serial
// run: the service's own timings (wall) and JFR's execution samples
// beneath the handler (CPU).
type SegmentShare = lab.SegmentShare

// PredictionCheck is a prediction next to its measurement.
type PredictionCheck struct {
	Spec          string  `json:"spec"`
	From          string  `json:"from"`
	Against       string  `json:"against"`
	PredictedMs   float64 `json:"predicted_mean_ms"`
	MeasuredMs    float64 `json:"measured_mean_ms"`
	ErrorPct      float64 `json:"error_pct"`
	PredictedGain float64 `json:"predicted_gain_pct"`
	MeasuredGain  float64 `json:"measured_gain_pct"`
	// The 95 % intervals: of the error and the measured gain (two
	// recordings: delta method), of the predicted gain (what the
	// prediction takes off, over the mean of the same requests). Methods:
	// docs/lab.md.
	ErrorInterval         *lab.Range `json:"error_interval_pct,omitempty"`
	PredictedGainInterval *lab.Range `json:"predicted_gain_interval_pct,omitempty"`
	MeasuredGainInterval  *lab.Range `json:"measured_gain_interval_pct,omitempty"`
	errE, predGainE       stats.Estimate
	measGainE             stats.Estimate
}

// SerialPredictions are the what-ifs predicted from the serial recording,
// as the seed lab makes them (the frames are the JVM service's).
var SerialPredictions = []string{"overlap=callUpstream,queryDb", "remove=sharedSection"}

// segments are the seed's segments and the frames that time them.
var segments = []struct{ name, frame string }{
	{"cpu", "JvmService.cpuWork"}, {"upstream", "JvmService.callUpstream"}, {"db", "JvmService.queryDb"}, {"shared", "JvmService.sharedSection"},
}

// tick is the resolution of the process CPU counter (/proc, USER_HZ 100).
const tick = 10.0 // ms

func outcome(env *lab.Env, cfg Config, runs []*ModeRun, bursts []*BurstRun, sat *SaturateRun, loadBefore float64) (*lab.Outcome, error) {
	res := &Result{Profile: env.Profile, Runs: runs, Bursts: bursts, Saturate: sat, RequestMode: len(runs) > 0 && runs[0].JFR.RequestMode,
		Config: ConfigJSON{UpstreamMs: units.Ms(cfg.UpstreamDelay), DBMs: units.Ms(cfg.DBDelay), Pool: cfg.Pool, CPUMs: units.Ms(cfg.CPU),
			SharedMs: units.Ms(cfg.Shared), BurstTasks: cfg.BurstTasks, BurstBatch: cfg.BurstBatch, BurstParallel: cfg.BurstParallelism,
			BurstTaskNs: float64(cfg.BurstTaskCPU.Nanoseconds()), BurstClients: cfg.BurstClients, BurstThinkMs: units.Ms(cfg.BurstThink), LoadAvgAtStart: loadBefore},
		PredictionSource: "computed by the lab from the serial recording's terms by the rule of docs/method.md §5 (overlap: mean − A − B + max(A, B); remove: mean − term); the JVM analysis does not predict yet"}
	if len(runs) > 0 && len(runs[0].JFR.Predictions) > 0 {
		res.PredictionSource = "the JVM analysis's own predictions (package jvm, request mode: each request's threads re-simulated across the marked hand-offs)"
	}
	med := map[string]*ModeRun{}
	for _, r := range runs {
		med[r.Mode] = r
	}
	var b strings.Builder
	o := &lab.Outcome{Title: "The seed experiment on the JVM: a JDK service, pgjdbc, JFR", JSON: res}
	fmt.Fprintf(&b, "Profile %q: %d clients, closed model, JVM warm-up %s excluded, %s recorded with JFR per mode (settings=profile + internal/jfr/latscope.jfc, started with jcmd after warm-up). Load average %.1f at the start.\n\n",
		env.Profile.Name, env.Profile.Clients, max(env.Profile.Warmup, jvmWarmup), max(env.Profile.Window, minWindow), loadBefore)
	fmt.Fprintf(&b, "Configuration (the ground truth of the checks): CPU %s, upstream (a JDK HttpServer) answers after %s, `SELECT pg_sleep(%.3f)` through pgjdbc behind a semaphore pool of %d, %s of CPU under a shared monitor.\n\n",
		cfg.CPU, cfg.UpstreamDelay, cfg.DBDelay.Seconds(), cfg.Pool, cfg.Shared)
	res.Disagree = disagreement(&b, med["serial"])
	modesTable(&b, runs)
	budgetTable(&b, runs)
	res.Predictions = predictionTable(&b, med, res.PredictionSource)
	instrumentsTable(&b, runs)
	burstTable(&b, cfg, bursts)
	saturateSection(&b, cfg, sat)
	o.Checks = append(checks(cfg, med, bursts, res), saturateChecks(sat)...)
	res.Checks = o.Checks
	res.Findings = findings(&b, runs, bursts, sat, loadBefore)
	o.Markdown = b.String()
	html, err := page(res, o.Checks)
	if err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	o.HTML = html
	return o, nil
}

func disagreement(b *strings.Builder, s *ModeRun) []SegmentShare {
	if s == nil {
		return nil
	}
	wall := map[string]float64{"cpu": s.Own.CPU, "upstream": s.Own.Upstream, "db": s.Own.DB, "shared": s.Own.Shared}
	var raw []SegmentShare
	var csum float64
	for _, seg := range segments {
		c := float64(s.JFR.CPUSamples[seg.frame])
		raw = append(raw, SegmentShare{Segment: seg.name, WallPct: wall[seg.name], CPUPct: c})
		csum += c
	}
	out := lab.Shares(raw)
	lab.WriteDisagreement(b, fmt.Sprintf("Share of the four segments: wall clock (the service's own System.nanoTime timings) against a CPU profile (JFR execution samples beneath the handler, %d of them).", int(csum)), out)
	return out
}

func modesTable(b *strings.Builder, runs []*ModeRun) {
	which := "the requests of the load inside the recording and their mean (client side)"
	if len(runs) > 0 && runs[0].JFR.RequestMode {
		which = "the requests in the recording and their mean (the library's latscope.Request events: server side)"
	}
	fmt.Fprintf(b, "## 2. Modes\n\nClient side (loadgen, every measured request); %s; CPU per request from the JVM's utime+stime (/proc, independent of JFR) over the requests the service counted in the same window.\n\n", which)
	t := markdown.NewTable("mode", "rps", "client mean ms", "p50 ms", "p99 ms", "requests in recording", "their mean ms", "CPU ms/request").RightFrom(1)
	for _, r := range runs {
		n := r.Counted
		if r.JFR.RequestMode {
			n = r.JFR.Count
		}
		t.Row(r.Mode, fmt.Sprintf("%.1f", r.Load.RPS), ms(r.Load.MeanMs), ms(r.Load.P50Ms), ms(r.Load.P99Ms),
			fmt.Sprintf("%d", n), ms(r.MeanMs), ms(r.CPUPerMs))
	}
	b.WriteString(t.String())
	b.WriteString("\n")
}

func budgetTable(b *strings.Builder, runs []*ModeRun) {
	if len(runs) > 0 && runs[0].JFR.RequestMode {
		fmt.Fprintf(b, "## 3. Budget per mode (JFR, request mode: ms per request from the library's latscope.Request events, wait sum / on the critical path)\n\n")
	} else {
		fmt.Fprintf(b, "## 3. Budget per mode (JFR, ms per request: waits beneath `%s`, requests counted from the load)\n\n", Handler)
	}
	type key struct{ path, mech, kind string }
	rows := map[key]map[string][2]float64{}
	maxOf := map[key]float64{}
	for _, r := range runs {
		for _, t := range r.JFR.Terms {
			k := key{t.Path, t.Mechanism, t.Kind.String()}
			if rows[k] == nil {
				rows[k] = map[string][2]float64{}
			}
			v := rows[k][r.Mode]
			rows[k][r.Mode] = [2]float64{v[0] + t.Ms, v[1] + t.CriticalMs}
			maxOf[k] = math.Max(maxOf[k], v[0]+t.Ms)
		}
	}
	var keys []key
	other := map[string][2]float64{}
	for k := range rows {
		if maxOf[k] >= 0.5 {
			keys = append(keys, k)
			continue
		}
		for m, v := range rows[k] {
			o := other[m]
			other[m] = [2]float64{o[0] + v[0], o[1] + v[1]}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if maxOf[keys[i]] != maxOf[keys[j]] {
			return maxOf[keys[i]] > maxOf[keys[j]]
		}
		return keys[i].path < keys[j].path
	})
	header := []string{"term", "mechanism", "kind"}
	for _, r := range runs {
		header = append(header, r.Mode)
	}
	t := markdown.NewTable(header...).RightFrom(3)
	for _, k := range keys {
		cells := []string{k.path, k.mech, k.kind}
		for _, r := range runs {
			v := rows[k][r.Mode]
			cells = append(cells, fmt.Sprintf("%.2f / %.2f", v[0], v[1]))
		}
		t.Row(cells...)
	}
	cells := []string{"other waits", "", ""}
	for _, r := range runs {
		cells = append(cells, fmt.Sprintf("%.2f / %.2f", other[r.Mode][0], other[r.Mode][1]))
	}
	t.Row(cells...)
	cells = []string{markdown.Bold("waits sum / mean"), "", ""}
	for _, r := range runs {
		cells = append(cells, markdown.Bold(fmt.Sprintf("%.1f %%", lab.Pct(r.JFR.WaitSum, r.MeanMs)))+fmt.Sprintf(" / %.1f %%", lab.Pct(r.JFR.Critical, r.MeanMs)))
	}
	t.Row(cells...)
	b.WriteString(t.String())
	if len(runs) > 0 && runs[0].JFR.RequestMode {
		b.WriteString("\nJFR has no per-thread running time: CPU comes from the process counter (section 5). In the concurrent and fixed modes the upstream call runs on an executor thread; the library's TaskSubmit/TaskRun/TaskWait events tie it to its request, so its wait is counted and the critical path follows it.\n\n")
	} else {
		b.WriteString("\nJFR has no per-thread running time: CPU comes from the process counter (section 5). In the concurrent and fixed modes the upstream call runs on an executor thread, outside the handler's stack; the handler waits for it in `Tasks.await`.\n\n")
	}
}

func predictionTable(b *strings.Builder, med map[string]*ModeRun, source string) []PredictionCheck {
	s, c, f := med["serial"], med["concurrent"], med["fixed"]
	if s == nil || c == nil || f == nil {
		return nil
	}
	var out []PredictionCheck
	u, d := s.JFR.Upstream, s.JFR.DBNetwork+s.JFR.PoolWait
	pred := s.MeanMs - u - d + math.Max(u, d)
	if p, ok := s.JFR.Predictions[SerialPredictions[0]]; ok {
		pred = p
	}
	out = append(out, PredictionCheck{Spec: SerialPredictions[0], From: "serial", Against: "concurrent", PredictedMs: units.Round3(pred), MeasuredMs: c.MeanMs,
		ErrorPct: lab.ErrPct(pred, c.MeanMs), PredictedGain: lab.Gain(s.MeanMs, pred), MeasuredGain: lab.Gain(s.MeanMs, c.MeanMs)})
	out[0].intervals(predictedEst(s, pred), meanEst(c), s, meanEst(s))
	pred = s.MeanMs - s.JFR.Lock
	if p, ok := s.JFR.Predictions[SerialPredictions[1]]; ok {
		pred = p
	}
	out = append(out, PredictionCheck{Spec: SerialPredictions[1], From: "serial", Against: "fixed vs concurrent", PredictedMs: units.Round3(pred), MeasuredMs: f.MeanMs,
		PredictedGain: lab.Gain(s.MeanMs, pred), MeasuredGain: lab.Gain(c.MeanMs, f.MeanMs)})
	out[1].intervals(predictedEst(s, pred), meanEst(f), s, meanEst(c))
	pred = c.MeanMs - c.JFR.Lock
	if p, ok := c.JFR.Predictions[SerialPredictions[1]]; ok {
		pred = p
	}
	// remove=sharedSection from the serial recording is measured as fixed
	// against concurrent: the change is the same, the base differs.
	out = append(out, PredictionCheck{Spec: "remove=sharedSection", From: "concurrent", Against: "fixed", PredictedMs: units.Round3(pred), MeasuredMs: f.MeanMs,
		ErrorPct: lab.ErrPct(pred, f.MeanMs), PredictedGain: lab.Gain(c.MeanMs, pred), MeasuredGain: lab.Gain(c.MeanMs, f.MeanMs)})
	out[2].intervals(predictedEst(c, pred), meanEst(f), c, meanEst(c))
	fmt.Fprintf(b, "## 4. Predictions, then measurements\n\nPredicted from one recording before the change was made; measured by making it (means of the requests inside each recording). Source: %s. In brackets, 95 %% intervals (docs/lab.md).\n\n", source)
	t := markdown.NewTable("what-if", "from", "measured in", "predicted mean ms", "measured mean ms", "error", "predicted gain", "measured gain").RightFrom(3)
	for _, p := range out {
		e := fmt.Sprintf("%+.1f %%", p.ErrorPct) + lab.Bracket(p.ErrorInterval)
		if p.Against == "fixed vs concurrent" {
			e = "—"
		}
		t.Row("`"+p.Spec+"`", p.From, p.Against, ms(p.PredictedMs), ms(p.MeasuredMs), e,
			fmt.Sprintf("%.1f %%", p.PredictedGain)+lab.Bracket(p.PredictedGainInterval), fmt.Sprintf("%.1f %%", p.MeasuredGain)+lab.Bracket(p.MeasuredGainInterval))
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	return out
}

func instrumentsTable(b *strings.Builder, runs []*ModeRun) {
	fmt.Fprintf(b, "## 5. Two instruments must add up\n\nJFR's waits on the critical path (request mode; else the handler thread's waits) plus CPU per request from /proc (independent), against the mean; and the service's own System.nanoTime timings of each segment against JFR's terms for it (all threads). JFR cannot see a thread waiting for a core: on a busy host that time is in neither instrument, and coverage falls below the band.\n\n")
	t := markdown.NewTable("mode", "mean ms", "own handler mean ms", "JFR critical waits ms", "independent CPU ms", "covered", "own upstream ms", "JFR upstream ms",
		"own db ms", "JFR db ms (network + pool)", "own lock wait ms", "JFR lock ms").RightFrom(1)
	for _, r := range runs {
		t.Row(r.Mode, ms(r.MeanMs), ms(r.Own.Total), ms(r.JFR.Critical), ms(r.CPUPerMs), fmt.Sprintf("%.1f %%", coverage(r)),
			ms(r.Own.Upstream), ms(r.JFR.Upstream), ms(r.Own.DB), ms(r.JFR.DBNetwork+r.JFR.PoolWait), ms(r.Own.Lock), ms(r.JFR.Lock))
	}
	b.WriteString(t.String())
	b.WriteString("\nThe service's own handler mean covers every request it finished in the window; the recording's mean leaves out the requests its edges cut, which are the longer ones (a request is cut with a probability that grows with its length), so it reads a little lower, by more in short windows.\n\n")
}

func burstTable(b *strings.Builder, cfg Config, bursts []*BurstRun) {
	fmt.Fprintf(b, "## 6. ForkJoinPool bursts\n\n`/burst` splits %d items of %s of CPU each over a ForkJoinPool of parallelism %d and joins them; %d clients think %s between requests, so each request wakes the pool from idle. Fan-out: one task per item; batched (the fix): %d items per task.\n\n",
		cfg.BurstTasks, cfg.BurstTaskCPU, cfg.BurstParallelism, cfg.BurstClients, cfg.BurstThink, cfg.BurstBatch)
	t := markdown.NewTable("variant", "tasks/request", "rps", "mean ms", "p99 ms", "own handler ms", "CPU ms/request", "pool machinery (JFR samples)", "churn flagged").Right(1, 2, 3, 4, 5, 6, 7)
	var verdicts []string
	for _, r := range bursts {
		t.Row(r.Variant, fmt.Sprintf("%.0f", r.ForksPerReq), fmt.Sprintf("%.1f", r.Load.RPS), fmt.Sprintf("%.3f", r.MeanMs), fmt.Sprintf("%.3f", r.Load.P99Ms),
			fmt.Sprintf("%.3f", r.OwnMs), fmt.Sprintf("%.3f", r.CPUPerMs), fmt.Sprintf("%.1f %% (%.1f–%.1f, %d samples)", r.Churn.Share, r.Churn.Low, r.Churn.High, r.Churn.Samples),
			yesNo(r.Churn.Flagged))
		verdicts = append(verdicts, r.Variant+": "+r.Churn.Verdict)
	}
	b.WriteString(t.String())
	b.WriteString("\nThe churn analysis (package sched's JVMChurn, docs/method.md §9) of each recording:\n\n")
	b.WriteString(markdown.Bullets(verdicts...))
	b.WriteString("\n")
}

// ms is a figure in ms to two decimals.
func ms(v float64) string { return fmt.Sprintf("%.2f", v) }

// coverage is (JFR critical waits + independent CPU) / mean, in % (in
// handler mode the critical waits are the handler thread's waits).
func coverage(r *ModeRun) float64 { return lab.Pct(r.JFR.Critical+r.CPUPerMs, r.MeanMs) }

// How the checks' standard errors are estimated (docs/lab.md, "Checks as
// statistical tests"). A JFR analysis keeps each request's latency but not
// its terms, so a term's per-request mean T gets the SE of the latency
// mean of the same requests: T is one part of each request's latency, and
// when it does not vary against the rest, Var(T) ≤ Var(latency). A ratio
// T / mean of the same requests then has SE ≤ (1 + T/mean)·SE/mean
// (Minkowski: SE(T̄ − R·L̄) ≤ SE(T̄) + R·SE(L̄)), a bound that ignores
// how closely T follows the latency and so is wide, never narrow.
const (
	methodMean  = "the latency mean's SE by batch means over the requests in the order they ended"
	methodTerm  = "a JFR term's mean taking the latency mean's SE (batch means; a part of each request's latency varies no more than the whole)"
	methodRatio = "a ratio over the same requests: SE ≤ (1 + ratio)·SE(mean)/mean, the latency mean's SE by batch means (a bound: JFR keeps no per-request terms)"
	methodTwo   = "delta method over two independent recordings, each mean's SE by batch means (a predicted mean taking the SE of the mean it was predicted from)"
	methodTick  = "the counter's resolution: one 10 ms tick at each end of both windows (a bound, not a 95 % interval)"
	methodShare = "Wilson score interval of the share of execution samples (package sched's JVM churn analysis)"
	methodNaive = " (this run kept no series: s/√n, as if the requests were independent)"
)

// meanEst is the run's mean latency (ms) with its standard error.
func meanEst(r *ModeRun) stats.Estimate {
	switch {
	case r == nil:
		return stats.Estimate{Value: math.NaN(), SE: math.NaN(), DF: math.NaN()}
	case r.MeanDF > 0:
		return stats.Estimate{Value: r.MeanMs, SE: r.MeanSEMs, DF: r.MeanDF}
	}
	n := r.Counted
	if r.JFR.RequestMode {
		n = r.JFR.Count
	}
	if n < stats.MinSeries || r.StdDevMs == 0 {
		return stats.Estimate{Value: r.MeanMs, SE: math.NaN(), DF: math.NaN()}
	}
	return stats.Estimate{Value: r.MeanMs, SE: r.StdDevMs / math.Sqrt(float64(n)), DF: float64(n - 1)}
}

// method is m, noting when the run's SE is the independent one.
func method(r *ModeRun, m string) string {
	if r != nil && r.MeanDF == 0 {
		return m + methodNaive
	}
	return m
}

// termEst is a per-request term of r (ms) with the SE of r's mean latency
// (methodTerm).
func termEst(r *ModeRun, v float64) stats.Estimate { return meanEst(r).WithValue(v) }

// predictedEst is a mean predicted from r's requests: it takes r's SE.
func predictedEst(r *ModeRun, pred float64) stats.Estimate { return meanEst(r).WithValue(pred) }

// ratioPct is 100·part / mean over r's requests with the bound of
// methodRatio.
func ratioPct(r *ModeRun, part float64) stats.Estimate {
	m := meanEst(r)
	if r == nil || r.MeanMs == 0 {
		return m
	}
	ratio := part / r.MeanMs
	return stats.Estimate{Value: 100 * ratio, SE: 100 * (1 + math.Abs(ratio)) * m.SE / r.MeanMs, DF: m.DF}
}

// intervals sets the prediction's estimates (centred on its own figures)
// and their 95 % intervals: the error of pred against meas, the predicted
// gain over base's requests (what the prediction takes off, a part of
// their latency: methodRatio) and the measured gain of meas against
// before (two recordings).
func (pc *PredictionCheck) intervals(pred, meas stats.Estimate, base *ModeRun, before stats.Estimate) {
	pc.errE = stats.Quotient(pred, meas).Affine(100, -100).WithValue(pc.ErrorPct)
	pc.predGainE = ratioPct(base, base.MeanMs-pred.Value).WithValue(pc.PredictedGain)
	pc.measGainE = stats.Quotient(meas, before).Affine(-100, 100).WithValue(pc.MeasuredGain)
	if pc.Against != "fixed vs concurrent" {
		pc.ErrorInterval = lab.RangeOf(pc.errE)
	}
	pc.PredictedGainInterval, pc.MeasuredGainInterval = lab.RangeOf(pc.predGainE), lab.RangeOf(pc.measGainE)
}

// checks judges each estimate by its 95 % interval against its band
// (lab.Estimated: pass inside, fail wholly outside, inconclusive across
// an edge; α 2.5 % per check when the truth sits on an edge); the
// instruments' agreement and the profiles' disagreement are exact.
func checks(cfg Config, med map[string]*ModeRun, bursts []*BurstRun, res *Result) []lab.Check {
	var cs []lab.Check
	add := func(name string, band lab.Band, want string, e stats.Estimate, m string) {
		cs = append(cs, lab.Estimated(name, want, band, e, m))
	}
	s, c, f := med["serial"], med["concurrent"], med["fixed"]
	if s != nil {
		// Every per-request figure of a recording carries the edge error
		// (half the requests cut by its edges over the counted, docs/jfr.md):
		// each band below is widened by it, and says so.
		e := s.EdgePct
		// A wait cannot be shorter than the sleep that causes it; it is
		// longer by the loopback round trip and the two processes'
		// scheduling: 10 %, twice the prediction band (method §11).
		up, db := units.Ms(cfg.UpstreamDelay), units.Ms(cfg.DBDelay)
		for _, t := range []struct {
			name       string
			conf, term float64
		}{{"serial: JFR upstream term vs the configured delay (ms)", up, s.JFR.Upstream}, {"serial: JFR query term (network) vs the configured pg_sleep (ms)", db, s.JFR.DBNetwork}} {
			lo, hi := t.conf*(1-e/100), 1.1*t.conf*(1+e/100)
			add(t.name, lab.Between(lo, hi), fmt.Sprintf("%.1f–%.1f (%.0f–%.0f ± %.1f %% edge)", lo, hi, t.conf, 1.1*t.conf, e), termEst(s, t.term), method(s, methodTerm))
		}
		add("serial waits sum / mean (%)", lab.Between(90-e, 102+e), band(90, 102, e), ratioPct(s, s.JFR.WaitSum), method(s, methodRatio))
		// The service's own timing of a segment encloses JFR's wait in it:
		// at most 100 % (+2 %: the two instruments' windows hold slightly
		// different requests), at least 85 % (the call's own CPU and waits
		// under JFR's 1 ms threshold, as in package jvm's recording test).
		// Two instruments on the same requests: no sampling error between
		// them beyond the edge error already in the band, so exact.
		for _, seg := range []struct {
			name      string
			own, jfrV float64
		}{{"upstream", s.Own.Upstream, s.JFR.Upstream}, {"db", s.Own.DB, s.JFR.DBNetwork + s.JFR.PoolWait}} {
			r := lab.Pct(seg.jfrV, seg.own)
			cs = append(cs, lab.Exact("serial: JFR "+seg.name+" term / the service's own timing of it (%)", band(85, 102, e), fmt.Sprintf("%.1f", r), between(r, 85-e, 102+e)))
		}
	}
	if c != nil && c.JFR.RequestMode {
		// Forked waits are counted once per thread (method §11: ~240 % in
		// the Go lab); serial code stays under the 102 % overfull margin.
		add("concurrent waits sum / mean (%)", lab.Over(120), "> 120", ratioPct(c, c.JFR.WaitSum), method(c, methodRatio))
	}
	for _, p := range res.Predictions {
		switch {
		case p.Spec == SerialPredictions[0]:
			add("overlap predicted vs measured concurrent mean (error %)", lab.Within(5), "within ±5", p.errE, method(s, methodTwo))
		case p.Against == "fixed vs concurrent" && c != nil && f != nil:
			// The noise of two separate runs is in the measured gain's
			// interval (it was a "+ 2 standard errors" allowance).
			add("remove shared section: predicted gain (%)", lab.Under(3), "under 3", p.predGainE, method(s, methodRatio))
			add("remove shared section: measured gain, fixed vs concurrent (%)", lab.Under(3), "under 3", p.measGainE, method(c, methodTwo))
		}
	}
	for _, m := range Modes {
		if r := med[m]; r != nil {
			add(m+": JFR waits + independent CPU / mean (%)", lab.Between(95-r.EdgePct, 103+r.EdgePct), band(95, 103, r.EdgePct), ratioPct(r, r.JFR.Critical+r.CPUPerMs), method(r, methodRatio+"; the independent CPU per request taken as exact"))
		}
	}
	if len(res.Disagree) == 4 {
		cpuTop, wallTop := lab.TopSegment(res.Disagree, true), lab.TopSegment(res.Disagree, false)
		cs = append(cs, lab.Exact("CPU profile's #1 differs from the wall clock's #1", "shared vs upstream", cpuTop+" vs "+wallTop, cpuTop != wallTop && wallTop == "upstream"))
	}
	if len(bursts) == 2 {
		fan, bat := bursts[0], bursts[1]
		// The counter moves in ticks: one at each end of both windows.
		resolution := 100 * (2*tick/math.Max(fan.CPUMs, tick) + 2*tick/math.Max(bat.CPUMs, tick))
		saving := lab.Gain(fan.CPUPerMs, bat.CPUPerMs)
		ck := lab.Judged("burst: batching lowers CPU per request (independent counter)", fmt.Sprintf("> 0 (± %.1f counter resolution)", resolution), lab.Over(0),
			saving, saving-resolution, saving+resolution, methodTick)
		ck.Got = fmt.Sprintf("%.3f → %.3f ms: %.0f %% saved", fan.CPUPerMs, bat.CPUPerMs, saving)
		cs = append(cs, ck)
		// Each share against the rule by its Wilson interval: flagged
		// wants it wholly above, not flagged wholly below.
		for _, x := range []struct {
			b       *BurstRun
			name    string
			flagged bool
		}{{fan, "burst: churn flagged on fan-out (pool machinery share, %)", true}, {bat, "burst: churn not flagged on batched (pool machinery share, %)", false}} {
			rule := x.b.Churn.RulePct
			if rule == 0 {
				rule = 10
			}
			bd := lab.Under(rule)
			if x.flagged {
				bd = lab.Over(rule)
			}
			lo, hi := x.b.Churn.Low, x.b.Churn.High
			if x.b.Churn.Samples == 0 || strings.HasPrefix(x.b.Churn.Verdict, "scheduler churn not") {
				lo, hi = math.NaN(), math.NaN() // too few samples to judge: inconclusive
			}
			ck := lab.Judged(x.name, "", bd, x.b.Churn.Share, lo, hi, methodShare)
			ck.Got = fmt.Sprintf("%.1f (%s)", x.b.Churn.Share, yesNo(x.b.Churn.Flagged))
			cs = append(cs, ck)
		}
	}
	return cs
}

// band is "lo–hi", and "± e edge" when the edge error widens it.
func band(lo, hi, e float64) string {
	if e == 0 {
		return fmt.Sprintf("%.0f–%.0f", lo, hi)
	}
	return fmt.Sprintf("%.0f–%.0f ± %.1f edge", lo, hi, e)
}

func yesNo(b bool) string {
	if b {
		return "flagged"
	}
	return "not flagged"
}

func findings(b *strings.Builder, runs []*ModeRun, bursts []*BurstRun, sat *SaturateRun, loadBefore float64) []string {
	var out []string
	for _, r := range runs {
		for _, f := range r.Findings {
			out = append(out, r.Mode+": "+f)
		}
	}
	for _, r := range bursts {
		for _, f := range r.Findings {
			out = append(out, "burst "+r.Variant+": "+f)
		}
	}
	if sat != nil {
		for _, f := range sat.Findings {
			out = append(out, fmt.Sprintf("lock, %d clients: %s", sat.Clients, f))
		}
	}
	if la := loadBefore; la > 1.5*float64(runtime.NumCPU()) {
		out = append(out, fmt.Sprintf("the machine was busy before the lab started (load average %.1f on %d cores): timings are noisier than they should be", la, runtime.NumCPU()))
	}
	n := 7
	if sat != nil {
		n = 8
	}
	fmt.Fprintf(b, "## %d. Findings of the JFR analysis\n\n", n)
	if len(out) == 0 {
		b.WriteString("None.\n")
	}
	items := make([]string, len(out))
	for i, f := range out {
		items[i] = strings.ReplaceAll(f, "\n", " ")
	}
	b.WriteString(markdown.Bullets(items...))
	b.WriteString("\nEach recording can be analysed by hand from the output folder:\n\n")
	for _, r := range runs {
		fmt.Fprintf(b, "    %s\n", r.Command)
	}
	for _, r := range bursts {
		fmt.Fprintf(b, "    %s\n", r.Command)
	}
	if sat != nil {
		fmt.Fprintf(b, "    latscope analyze %s\n", sat.Recording)
	}
	return out
}

func between(x, lo, hi float64) bool { return x >= lo && x <= hi }
