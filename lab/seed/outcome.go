package seed

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"

	"github.com/latscope/latscope/internal/frame"
	"github.com/latscope/latscope/internal/render"
	"github.com/latscope/latscope/internal/report/markdown"
	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/lab"
)

// Result is the scenario's JSON output.
type Result struct {
	Profile     lab.Profile       `json:"profile"`
	Runs        []*ModeRun        `json:"runs"`
	Median      map[string]int    `json:"median_run"` // mode → index in Runs
	Disagree    []RegionShare     `json:"profile_disagreement"`
	Predictions []PredictionCheck `json:"predictions"`
	Findings    []string          `json:"findings"`
	Checks      []lab.Check       `json:"checks"`
}

// RegionShare is one segment's share in the wall-clock and the CPU view.
type RegionShare = lab.SegmentShare

// PredictionCheck is a prediction next to its measurement.
type PredictionCheck struct {
	Spec          string  `json:"spec"`
	From          string  `json:"from"`
	Against       string  `json:"against"`
	PredictedMs   float64 `json:"predicted_mean_ms"`
	MeasuredMs    float64 `json:"measured_mean_ms"`
	ErrorPct      float64 `json:"error_pct"`
	PredictedRPS  float64 `json:"predicted_rps"`
	MeasuredRPS   float64 `json:"measured_rps"`
	PredictedGain float64 `json:"predicted_gain_pct"`
	MeasuredGain  float64 `json:"measured_gain_pct"`
	// The 95 % intervals (absent without per-request series): of the
	// error (the predicted mean against the measured one, two windows:
	// delta method), of the predicted gain (the predicted mean over the
	// mean of the same requests: a ratio of means) and of the measured
	// gain (two windows: delta method). Methods: docs/lab.md.
	ErrorInterval         *lab.Range `json:"error_interval_pct,omitempty"`
	PredictedGainInterval *lab.Range `json:"predicted_gain_interval_pct,omitempty"`
	MeasuredGainInterval  *lab.Range `json:"measured_gain_interval_pct,omitempty"`
	errE, predGainE       stats.Estimate
	measGainE             stats.Estimate
}

// How the checks' standard errors are estimated (docs/lab.md, "Checks as
// statistical tests"): shown with each check.
const (
	methodRatio = "ratio of means over the same requests: delta method, batch means of the residuals (requests in the order they ended)"
	methodWaits = methodRatio + "; each request's wait sum stood in for by its critical-path waits, scaled to the window's wait sum"
	methodCover = methodRatio + "; the independent CPU per request (process counter / requests) taken as exact"
	methodTwo   = "delta method over two independent windows, each mean's SE by batch means (a predicted mean's from its requests' predicted latencies, as latscope compare)"
)

// segments are the demo's regions, in the seed's order.
var segments = []string{"cpu", "upstream", "db", "shared"}

func outcome(env *lab.Env, runs []*ModeRun, loadBefore float64) (*lab.Outcome, error) {
	res := &Result{Profile: env.Profile, Runs: runs, Median: map[string]int{}}
	med := map[string]*ModeRun{}
	for _, m := range Modes {
		i := medianRun(runs, m)
		res.Median[m] = i
		med[m] = runs[i]
	}
	var b strings.Builder
	o := &lab.Outcome{Title: "The seed experiment: where did the time go, and which fix helps?", JSON: res}
	fmt.Fprintf(&b, "Profile %q: %d clients, closed model, warm-up %s excluded, %s traced per run, %d run(s) per mode (median shown).\n\n",
		env.Profile.Name, env.Profile.Clients, env.Profile.Warmup, env.Profile.Window, env.Profile.Runs)
	res.Disagree = disagreement(&b, med["serial"])
	modesTable(&b, med)
	budgetTable(&b, med)
	res.Predictions = predictionTable(&b, med)
	coverageTable(&b, med)
	o.Checks = checks(med, res)
	res.Checks = o.Checks
	res.Findings = findings(&b, env, med, loadBefore)
	o.Markdown = b.String()
	html, err := page(res, med, o.Checks)
	if err != nil {
		return nil, fmt.Errorf("html report: %w", err)
	}
	o.HTML = html
	return o, nil
}

// medianRun returns the index of the run of mode with the median mean latency.
func medianRun(runs []*ModeRun, mode string) int {
	var idx []int
	for i, r := range runs {
		if r.Mode == mode {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return runs[idx[a]].Load.MeanMs < runs[idx[b]].Load.MeanMs })
	return idx[len(idx)/2]
}

func group(r *ModeRun) *render.Group {
	if len(r.Report.Groups) == 0 {
		return &render.Group{}
	}
	return &r.Report.Groups[0]
}

func disagreement(b *strings.Builder, serial *ModeRun) []RegionShare {
	g := group(serial)
	var raw []RegionShare
	for _, s := range segments {
		for _, r := range g.Regions {
			if r.Name == s {
				raw = append(raw, RegionShare{Segment: s, WallPct: r.Wall.Ms(), CPUPct: float64(r.CPUSamples)})
			}
		}
	}
	out := lab.Shares(raw) // shares of in-handler time, over the four segments
	var cpu float64
	for _, r := range raw {
		cpu += r.CPUPct
	}
	lab.WriteDisagreement(b, fmt.Sprintf("Share of in-handler time per segment: wall clock (goroutine time in the trace) against a CPU profile (in-handler CPU samples, %d of them).", int(cpu)), out)
	return out
}

func modesTable(b *strings.Builder, med map[string]*ModeRun) {
	fmt.Fprintf(b, "## 2. Modes\n\nClient side (every request of the measured window) and CPU per request from the process's utime+stime (an instrument independent of the tracer).\n\n")
	t := markdown.NewTable("mode", "rps", "mean ms", "p50 ms", "p99 ms", "CPU ms/request", "requests traced").RightFrom(1)
	for _, m := range Modes {
		r := med[m]
		t.Row(m, fmt.Sprintf("%.1f", r.Load.RPS), fmt.Sprintf("%.2f", r.Load.MeanMs), fmt.Sprintf("%.2f", r.Load.P50Ms), fmt.Sprintf("%.2f", r.Load.P99Ms),
			fmt.Sprintf("%.2f", r.CPUPerMs), fmt.Sprintf("%d", r.Report.Requests.Count))
	}
	b.WriteString(t.String())
	b.WriteString("\n")
}

func budgetTable(b *strings.Builder, med map[string]*ModeRun) {
	fmt.Fprintf(b, "## 3. Budget per mode (ms per request: goroutine time / on the critical path)\n\n")
	type row struct {
		name string
		vals map[string][2]float64
		max  float64
	}
	rows := map[string]*row{}
	add := func(mode, name string, wait, crit float64) {
		r := rows[name]
		if r == nil {
			r = &row{name: name, vals: map[string][2]float64{}}
			rows[name] = r
		}
		v := r.vals[mode]
		r.vals[mode] = [2]float64{v[0] + wait, v[1] + crit}
		r.max = math.Max(r.max, math.Max(wait, crit))
	}
	for _, m := range Modes {
		g := group(med[m])
		for _, t := range g.Terms {
			name := fmt.Sprintf("%s (%s, %s)", frame.Short(t.Frame), frame.Short(t.Mechanism), t.Kind)
			if t.Frame == "" {
				name = fmt.Sprintf("(no app frame) (%s, %s)", frame.Short(t.Mechanism), t.Kind)
			}
			add(m, name, t.Wait.Ms(), t.Critical.Ms())
		}
	}
	var list []*row
	other := &row{name: "other waits", vals: map[string][2]float64{}}
	for _, r := range rows {
		if r.max >= 0.5 {
			list = append(list, r)
			continue
		}
		for m, v := range r.vals {
			o := other.vals[m]
			other.vals[m] = [2]float64{o[0] + v[0], o[1] + v[1]}
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].max > list[j].max })
	list = append(list, other)
	t := markdown.NewTable(append([]string{"term"}, Modes...)...).RightFrom(1)
	for _, r := range list {
		cells := []string{r.name}
		for _, m := range Modes {
			v := r.vals[m]
			cells = append(cells, fmt.Sprintf("%.2f / %.2f", v[0], v[1]))
		}
		t.Row(cells...)
	}
	for _, line := range []struct {
		name string
		f    func(g *render.Group) string
	}{
		{"running (CPU as Go sees it)", func(g *render.Group) string {
			return fmt.Sprintf("%.2f / %.2f", g.CPU.Running.Ms(), g.CPU.CriticalRunning.Ms())
		}},
		{"runnable (scheduler wait)", func(g *render.Group) string {
			return fmt.Sprintf("%.2f / %.2f", g.CPU.Runnable.Ms(), g.CPU.CriticalRunnable.Ms())
		}},
		{markdown.Bold("waits sum / mean"), func(g *render.Group) string {
			return markdown.Bold(fmt.Sprintf("%.1f %%", g.Coverage.WaitSumPct)) + fmt.Sprintf(" / %.1f %%", g.Coverage.CriticalPct)
		}},
	} {
		cells := []string{line.name}
		for _, m := range Modes {
			cells = append(cells, line.f(group(med[m])))
		}
		t.Row(cells...)
	}
	b.WriteString(t.String())
	b.WriteString("\nOnce a request forks (concurrent, fixed), the sum of waits exceeds the mean and stops being a decomposition; the critical path still adds up to 100 %.\n\n")
}

func prediction(r *ModeRun, spec string) (render.Prediction, bool) {
	for _, p := range group(r).Predictions {
		if p.Spec == spec {
			return p, true
		}
	}
	return render.Prediction{}, false
}

func predictionTable(b *strings.Builder, med map[string]*ModeRun) []PredictionCheck {
	var out []PredictionCheck
	s, c, f := med["serial"], med["concurrent"], med["fixed"]
	gs, gc, gf := group(s), group(c), group(f)
	S, C, F := s.series.meanMs().WithValue(gs.Requests.Mean.Ms()), c.series.meanMs().WithValue(gc.Requests.Mean.Ms()), f.series.meanMs().WithValue(gf.Requests.Mean.Ms())
	if p, ok := prediction(s, SerialPredictions[0]); ok {
		pc := PredictionCheck{Spec: p.Spec, From: "serial", Against: "concurrent", PredictedMs: p.Mean.Ms(), MeasuredMs: gc.Requests.Mean.Ms(),
			ErrorPct: lab.ErrPct(p.Mean.Ms(), gc.Requests.Mean.Ms()), PredictedRPS: p.RPS, MeasuredRPS: c.Load.RPS,
			PredictedGain: lab.Gain(gs.Requests.Mean.Ms(), p.Mean.Ms()), MeasuredGain: lab.Gain(gs.Requests.Mean.Ms(), gc.Requests.Mean.Ms())}
		pc.intervals(errorPct(s.series.predictedMs(p), C), predGain(s, p), gain(S, C))
		out = append(out, pc)
	}
	if p, ok := prediction(s, SerialPredictions[1]); ok {
		pc := PredictionCheck{Spec: p.Spec, From: "serial", Against: "fixed vs concurrent", PredictedMs: p.Mean.Ms(),
			MeasuredMs: gf.Requests.Mean.Ms(), PredictedRPS: p.RPS, MeasuredRPS: f.Load.RPS,
			PredictedGain: lab.Gain(gs.Requests.Mean.Ms(), p.Mean.Ms()), MeasuredGain: lab.Gain(gc.Requests.Mean.Ms(), gf.Requests.Mean.Ms())}
		pc.intervals(none(0), predGain(s, p), gain(C, F))
		out = append(out, pc)
	}
	if p, ok := prediction(c, ConcurrentPredictions[0]); ok {
		pc := PredictionCheck{Spec: p.Spec, From: "concurrent", Against: "fixed", PredictedMs: p.Mean.Ms(), MeasuredMs: gf.Requests.Mean.Ms(),
			ErrorPct: lab.ErrPct(p.Mean.Ms(), gf.Requests.Mean.Ms()), PredictedRPS: p.RPS, MeasuredRPS: f.Load.RPS,
			PredictedGain: lab.Gain(gc.Requests.Mean.Ms(), p.Mean.Ms()), MeasuredGain: lab.Gain(gc.Requests.Mean.Ms(), gf.Requests.Mean.Ms())}
		pc.intervals(errorPct(c.series.predictedMs(p), F), predGain(c, p), gain(C, F))
		out = append(out, pc)
	}
	fmt.Fprintf(b, "## 4. Predictions, then measurements\n\nPredicted from one trace before the change was made; measured by making it (latency from the traces, throughput from the load generator; predicted rps = clients / predicted mean, capped by CPU). In brackets, 95 %% intervals: the error's and the measured gain's over the two windows, the predicted gain's over the requests it was predicted from.\n\n")
	t := markdown.NewTable("what-if", "from", "measured in", "predicted mean ms", "measured mean ms", "error", "predicted gain", "measured gain", "predicted rps", "measured rps").RightFrom(3)
	for _, p := range out {
		e := fmt.Sprintf("%+.1f %%", p.ErrorPct) + lab.Bracket(p.ErrorInterval)
		if p.Against == "fixed vs concurrent" {
			e = "—"
		}
		t.Row("`"+p.Spec+"`", p.From, p.Against, fmt.Sprintf("%.2f", p.PredictedMs), fmt.Sprintf("%.2f", p.MeasuredMs), e,
			fmt.Sprintf("%.1f %%", p.PredictedGain)+lab.Bracket(p.PredictedGainInterval), fmt.Sprintf("%.1f %%", p.MeasuredGain)+lab.Bracket(p.MeasuredGainInterval),
			fmt.Sprintf("%.1f", p.PredictedRPS), fmt.Sprintf("%.1f", p.MeasuredRPS))
	}
	b.WriteString(t.String())
	b.WriteString("\nThe CPU profile's first place (the shared section) is worth almost nothing; overlapping the two waits is worth about a third of the latency.\n\n")
	return out
}

// intervals sets the prediction's estimates, centred on its own figures,
// and their 95 % intervals.
func (pc *PredictionCheck) intervals(errE, predGainE, measGainE stats.Estimate) {
	pc.errE, pc.predGainE, pc.measGainE = errE.WithValue(pc.ErrorPct), predGainE.WithValue(pc.PredictedGain), measGainE.WithValue(pc.MeasuredGain)
	if pc.Against != "fixed vs concurrent" {
		pc.ErrorInterval = lab.RangeOf(pc.errE)
	}
	pc.PredictedGainInterval, pc.MeasuredGainInterval = lab.RangeOf(pc.predGainE), lab.RangeOf(pc.measGainE)
}

// errorPct is 100·(predicted / measured − 1) over two independent windows.
func errorPct(pred, meas stats.Estimate) stats.Estimate {
	return stats.Quotient(pred, meas).Affine(100, -100)
}

// gain is 100·(1 − after / before) over two independent windows.
func gain(before, after stats.Estimate) stats.Estimate {
	return stats.Quotient(after, before).Affine(-100, 100)
}

// predGain is the predicted gain 100·(1 − predicted / mean) over the
// requests of r it was predicted from: a ratio of means over the same
// requests, so what they share (their latencies) cancels.
func predGain(r *ModeRun, p render.Prediction) stats.Estimate {
	xs := r.series.predictedPer(p)
	if xs == nil {
		return none(0)
	}
	return stats.RatioOfMeans(xs, r.series.lat).Affine(-100, 100)
}

func coverageTable(b *strings.Builder, med map[string]*ModeRun) {
	fmt.Fprintf(b, "## 5. Two instruments must add up\n\nCritical-path waits and scheduler wait from the trace, plus CPU per request from /proc (independent), against the mean.\n\n")
	t := markdown.NewTable("mode", "mean ms", "critical waits ms", "runnable ms", "independent CPU ms", "covered", "unexplained ms").RightFrom(1)
	for _, m := range Modes {
		g := group(med[m])
		var crit float64
		for _, t := range g.Terms {
			crit += t.Critical.Ms()
		}
		cov, un, ind := "—", "—", "—"
		if g.Coverage.IndependentPct != nil {
			cov, un, ind = fmt.Sprintf("%.1f %%", *g.Coverage.IndependentPct), fmt.Sprintf("%.2f", g.Coverage.Unexplained.Ms()), fmt.Sprintf("%.2f", g.CPU.Independent.Ms())
		}
		t.Row(m, fmt.Sprintf("%.2f", g.Requests.Mean.Ms()), fmt.Sprintf("%.2f", crit), fmt.Sprintf("%.2f", g.CPU.CriticalRunnable.Ms()), ind, cov, un)
	}
	b.WriteString(t.String())
	b.WriteString("\n")
}

// checks judges each estimate by its 95 % interval against its band
// (lab.Estimated: pass inside, fail wholly outside, inconclusive across
// an edge; α 2.5 % per check when the truth sits on an edge) and the
// profiles' disagreement exactly.
func checks(med map[string]*ModeRun, res *Result) []lab.Check {
	gs, gc := group(med["serial"]), group(med["concurrent"])
	ss, sc := med["serial"].series, med["concurrent"].series
	var cs []lab.Check
	add := func(name, want string, band lab.Band, e stats.Estimate, method string) {
		cs = append(cs, lab.Estimated(name, want, band, e, method))
	}
	waits := func(s *series) []float64 {
		if s == nil {
			return nil
		}
		return s.critWait
	}
	add("serial waits sum / mean (%)", "90–102", lab.Between(90, 102), ss.ratioPct(waits(ss), gs.Coverage.WaitSumPct, true), methodWaits)
	add("concurrent waits sum / mean (%)", "> 120", lab.Over(120), sc.ratioPct(waits(sc), gc.Coverage.WaitSumPct, true), methodWaits)
	var path []float64
	if sc != nil {
		path = sc.path
	}
	add("concurrent critical path / mean (%)", "98–102", lab.Between(98, 102), sc.ratioPct(path, gc.Coverage.CriticalPct, false), methodRatio)
	for _, p := range res.Predictions {
		switch {
		case p.Spec == SerialPredictions[0]:
			add("overlap predicted vs measured concurrent mean (error %)", "within ±5", lab.Within(5), p.errE, methodTwo)
		case p.Against == "fixed vs concurrent":
			// "Gains under 3 %": the fix does not help. Slower (a negative
			// gain) counts too — the seed went 108.45 → 110.52 ms
			// (docs/method.md §10, §11). The noise of two separate runs is
			// in the measured gain's interval.
			add("remove shared section: predicted gain (%)", "under 3", lab.Under(3), p.predGainE, methodRatio)
			add("remove shared section: measured gain, fixed vs concurrent (%)", "under 3", lab.Under(3), p.measGainE, methodTwo)
		}
	}
	for _, m := range Modes {
		g, s := group(med[m]), med[m].series
		name := m + ": critical waits + independent CPU / mean (%)"
		c := g.Coverage.IndependentPct
		if c == nil || g.CPU.Independent == nil {
			cs = append(cs, lab.Exact(name, "95–103", "no independent CPU", false))
			continue
		}
		var x []float64
		if s != nil {
			x = plus(sum(s.critWait, s.critRun), float64(*g.CPU.Independent)) // ns
		}
		add(name, "95–103", lab.Between(95, 103), s.ratioPct(x, *c, false), methodCover)
	}
	if len(res.Disagree) == 4 {
		cpuTop, wallTop := lab.TopSegment(res.Disagree, true), lab.TopSegment(res.Disagree, false)
		cs = append(cs, lab.Exact("CPU profile's #1 differs from the wall clock's #1", "shared vs upstream", cpuTop+" vs "+wallTop, cpuTop != wallTop && wallTop == "upstream"))
	}
	return cs
}

func findings(b *strings.Builder, env *lab.Env, med map[string]*ModeRun, loadBefore float64) []string {
	var out []string
	for _, m := range Modes {
		r := med[m]
		for _, f := range r.Report.Findings {
			if f.Kind == "cut-by-window" {
				continue // expected: the window cuts the requests in flight at its edges
			}
			out = append(out, m+": "+f.Text)
		}
		if w := r.window; w != nil {
			secs := w.End.Sub(w.Start).Seconds()
			if busy := r.CPUMs / 1000 / secs / float64(cores()); busy > 0.9 {
				out = append(out, fmt.Sprintf("%s: the service used %.0f%% of the machine's CPU: it is CPU-saturated and latency contains CPU queueing (seed mistake 1)", m, 100*busy))
			}
		}
	}
	if la := loadBefore; la > 1.5*float64(cores()) {
		out = append(out, fmt.Sprintf("the machine was busy before the lab started (load average %.1f on %d cores): timings are noisier than they should be", la, cores()))
	}
	fmt.Fprintf(b, "## 6. Findings\n\n")
	if len(out) == 0 {
		b.WriteString("None: no warm-up in the windows, no CPU saturation, every prediction matched a term.\n")
	}
	b.WriteString(markdown.Bullets(out...))
	return out
}

func cores() int { return runtime.NumCPU() }
