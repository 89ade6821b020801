package render

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/internal/termsafe"
	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/opterr"

	"github.com/latscope/latscope/internal/frame"
)

// DefaultMissPct is the prediction error (percent of the measurement) above
// which compare reports a miss.
const DefaultMissPct = 5.0

// Comparison checks predictions made from one trace against a second trace
// in which the change was made for real ("true zeroing", docs/method.md §5).
type Comparison struct {
	Before  Requests `json:"before"`
	After   Requests `json:"after"`
	MissPct float64  `json:"miss_pct"`
	// Confidence is the level of the intervals and verdicts (0.95), and
	// IntervalMethod how their standard errors were estimated.
	Confidence     float64           `json:"confidence"`
	IntervalMethod string            `json:"interval_method"`
	Predictions    []PredictionCheck `json:"predictions"`
	Terms          []TermDelta       `json:"terms"`
	// Host sets the CPU each trace's Ps had per running second side by
	// side; absent unless both traces carry enough CPU samples.
	Host *HostCheck `json:"host,omitempty"`
	// Warnings say why the comparison may judge nothing: two traces that
	// share no application frame are not of the same service.
	Warnings []string `json:"warnings,omitempty"`
	group    string
}

// PredictionCheck is one prediction next to the measurement.
type PredictionCheck struct {
	Spec string `json:"spec"`
	// Method is how the prediction engine predicted (whatif.Method) and
	// Why the reason, as analyze prints them; absent when the report's
	// predictions did not come from the engine (render.Inputs.Specs unset).
	Method        string   `json:"method,omitempty"`
	Why           string   `json:"why,omitempty"`
	PredictedMean Duration `json:"predicted_mean_ms"`
	MeasuredMean  Duration `json:"measured_mean_ms"`
	ErrorPct      float64  `json:"error_pct"`
	PredictedP99  Duration `json:"predicted_p99_ms"`
	MeasuredP99   Duration `json:"measured_p99_ms"`
	P99ErrorPct   float64  `json:"p99_error_pct"`
	PredictedRPS  float64  `json:"predicted_rps"`
	MeasuredRPS   float64  `json:"measured_rps"`
	RPSErrorPct   float64  `json:"rps_error_pct"`
	// Miss is the point estimate's rule, unchanged: |ErrorPct| > MissPct.
	Miss bool `json:"miss"`
	// The 95 % intervals of the measured mean (AFTER's requests), of the
	// predicted mean (BEFORE's own sampling error) and of the error (their
	// difference, in percent of the measured mean); null when a trace has
	// too few requests for one (or no per-request series was given).
	MeasuredLow   *Duration `json:"measured_mean_low_ms"`
	MeasuredHigh  *Duration `json:"measured_mean_high_ms"`
	PredictedLow  *Duration `json:"predicted_mean_low_ms"`
	PredictedHigh *Duration `json:"predicted_mean_high_ms"`
	ErrorLowPct   *float64  `json:"error_low_pct"`
	ErrorHighPct  *float64  `json:"error_high_pct"`
	// Verdict is hit (the error's interval lies within ±MissPct),
	// miss (wholly outside) or inconclusive (it crosses the bar).
	Verdict string `json:"verdict"`
	// Decide, for an inconclusive verdict, says what would decide it;
	// MoreRequests is the factor of requests in each trace it needs (0
	// when no amount would: the estimate sits on the bar).
	Decide       string  `json:"decide,omitempty"`
	MoreRequests float64 `json:"more_requests_factor,omitempty"`
}

// Verdicts of a prediction (and of a finding with a threshold).
const (
	VerdictHit          = "hit"
	VerdictMiss         = "miss"
	VerdictInconclusive = "inconclusive"
)

// IntervalMethod names how compare's standard errors are estimated.
const IntervalMethod = "batch means over requests in the order they ended (docs/method.md §13)"

// Samples are the per-request series compare's intervals rest on, by
// request type, each in the order the requests ended.
type Samples struct {
	// After holds the second trace's latencies (ns).
	After map[string][]int64
	// Predicted holds, per prediction of the first trace in order, its
	// requests' predicted latencies (ns). Only their spread is used: the
	// predicted mean itself is the report's. Not needed, and not used, for
	// predictions the engine made (render.Inputs.Specs): they carry their
	// own standard error, from the exact simulated series.
	Predicted map[string][][]int64
}

// TermDelta is a term's critical time per request before and after. Terms
// are the same term in both traces when their call paths, mechanisms and
// kinds agree, or, for a call the fix moved (into a goroutine, under
// another caller), when its innermost frame, mechanism and kind are unique
// among the terms left on both sides. Name is the first trace's.
type TermDelta struct {
	Name      string   `json:"name"`
	Frame     string   `json:"frame"`
	AppPath   []string `json:"app_path"`
	Mechanism string   `json:"mechanism"`
	Kind      string   `json:"kind"`
	Before    Duration `json:"before_ms"`
	After     Duration `json:"after_ms"`
	Delta     Duration `json:"delta_ms"`
}

// Compare compares the primary request type of two reports. before must
// carry the predictions.
// Without per-request series its intervals have zero width: the verdict
// is the point estimate's (CompareSamples gives them).
func Compare(before, after *Report, missPct float64) (*Comparison, error) {
	return CompareSamples(before, after, missPct, nil)
}

// CompareSamples is Compare with the per-request series that give the
// means their 95 % intervals and the predictions their verdicts.
func CompareSamples(before, after *Report, missPct float64, s *Samples) (*Comparison, error) {
	if len(before.Groups) == 0 || len(after.Groups) == 0 {
		return nil, fmt.Errorf("compare: both traces need requests (before has %d request types, after %d)", len(before.Groups), len(after.Groups))
	}
	b, a := &before.Groups[0], &after.Groups[0]
	if b.Name != a.Name {
		for i := range after.Groups {
			if after.Groups[i].Name == b.Name {
				a = &after.Groups[i]
			}
		}
		if a.Name != b.Name {
			return nil, fmt.Errorf("compare: %w", opterr.Wrap("task", fmt.Errorf("not given: request type %q of the first trace is not in the second (it has %q); pick one", b.Name, a.Name)))
		}
	}
	c := &Comparison{Before: b.Requests, After: a.Requests, MissPct: missPct, group: b.Name, Predictions: []PredictionCheck{},
		Confidence: stats.Confidence, IntervalMethod: IntervalMethod}
	var afterLat []int64
	var predLat [][]int64
	if s != nil {
		afterLat, predLat = s.After[b.Name], s.Predicted[b.Name]
	}
	measured := seriesMean(afterLat)
	for i, p := range b.Predictions {
		pc := PredictionCheck{Spec: p.Spec, Method: p.Method, Why: p.Why, PredictedMean: p.Mean, MeasuredMean: a.Requests.Mean,
			PredictedP99: p.P99, MeasuredP99: a.Requests.P99, PredictedRPS: p.RPS, MeasuredRPS: a.Requests.RPS}
		pc.ErrorPct = errPct(float64(p.Mean), float64(a.Requests.Mean))
		if p.P99 > 0 { // 0: not predicted (the requests queue at a cap)
			pc.P99ErrorPct = errPct(float64(p.P99), float64(a.Requests.P99))
		}
		pc.RPSErrorPct = errPct(p.rps, a.Requests.rps)
		pc.Miss = math.Abs(100*(float64(p.Mean)-float64(a.Requests.Mean))/float64(a.Requests.Mean)) > missPct
		var pe meanSE
		switch {
		case p.Method != "": // the engine's own interval
			pe = engineSE(p, b.Requests.Count)
		case i < len(predLat):
			pe = predicted(p, predLat[i])
		}
		c.judge(&pc, p, measured, pe, s != nil)
		c.Predictions = append(c.Predictions, pc)
	}
	c.Host = hostCheck(before.Trace, after.Trace)
	c.Terms = termDeltas(b.BudgetTerms(), a.BudgetTerms(), b.CPU, a.CPU)
	if w := unrelated(b.BudgetTerms(), a.BudgetTerms()); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	return c, nil
}

// unrelated says, when both request types have application frames and no
// frame is in both, that the traces do not look like one service before
// and after a change: the term deltas then pair nothing, and a prediction
// "measured" in the second trace measures another program.
func unrelated(before, after []Term) string {
	fb, fa := termFrames(before), termFrames(after)
	if len(fb) == 0 || len(fa) == 0 {
		return ""
	}
	for f := range fb {
		if fa[f] {
			return ""
		}
	}
	return fmt.Sprintf("the two traces share no application frame (before: %s; after: %s): they do not look like the same service, so the predictions and deltas below compare different programs",
		someFrames(fb), someFrames(fa))
}

// termFrames is the set of application frames on the terms' call paths.
func termFrames(ts []Term) map[string]bool {
	out := map[string]bool{}
	for _, t := range ts {
		for _, f := range t.AppPath {
			out[f] = true
		}
		if t.Frame != "" {
			out[t.Frame] = true
		}
	}
	return out
}

// someFrames names up to three frames of set, sorted, and how many more.
func someFrames(set map[string]bool) string {
	fs := make([]string, 0, len(set))
	for f := range set {
		fs = append(fs, frame.Short(f))
	}
	sort.Strings(fs)
	if len(fs) > 3 {
		return strings.Join(fs[:3], ", ") + fmt.Sprintf(" and %d more", len(fs)-3)
	}
	return strings.Join(fs, ", ")
}

func errPct(pred, meas float64) float64 {
	if meas == 0 {
		return 0
	}
	return units.Round3(100 * (pred - meas) / meas)
}

func termDeltas(before, after []Term, cpuBefore, cpuAfter CPU) []TermDelta {
	// running and runnable are on the critical path too: a fix that moves
	// the waiting onto the CPUs shows there (the terms of kind running with
	// a frame split the running row: the CPU of each frame)
	out := []TermDelta{
		{Name: "running (on CPU as Go sees it)", Kind: "running", Before: cpuBefore.CriticalRunning, After: cpuAfter.CriticalRunning},
		{Name: "runnable (scheduler wait)", Kind: "runnable", Before: cpuBefore.CriticalRunnable, After: cpuAfter.CriticalRunnable},
	}
	var leftB, leftA []Term
	// the same call path, mechanism and kind: the same term
	byPath := map[string]int{} // before's unpaired terms, by path
	for _, t := range before {
		byPath[termKey(t.AppPath, t)] = len(out)
		out = append(out, delta(t, t.Critical, 0))
	}
	for _, t := range after {
		if i, ok := byPath[termKey(t.AppPath, t)]; ok {
			out[i].After = t.Critical
			delete(byPath, termKey(t.AppPath, t))
			continue
		}
		leftA = append(leftA, t)
	}
	for _, t := range before {
		if _, ok := byPath[termKey(t.AppPath, t)]; ok {
			leftB = append(leftB, t)
		}
	}
	// a call the fix moved (into a goroutine, under another caller) keeps
	// its innermost frame: pair what is left by frame when that is unique
	// on both sides
	count := func(ts []Term) map[string]int {
		n := map[string]int{}
		for _, t := range ts {
			n[termKey([]string{t.Frame}, t)]++
		}
		return n
	}
	nb, na := count(leftB), count(leftA)
	for _, t := range leftA {
		k := termKey([]string{t.Frame}, t)
		if nb[k] == 1 && na[k] == 1 {
			for _, b := range leftB {
				if termKey([]string{b.Frame}, b) == k {
					out[byPath[termKey(b.AppPath, b)]].After = t.Critical
				}
			}
			continue
		}
		out = append(out, delta(t, 0, t.Critical))
	}
	for i := range out {
		d := &out[i]
		d.Delta = d.After - d.Before
	}
	sort.Slice(out, func(i, j int) bool {
		if math.Abs(out[i].Delta.Ms()) != math.Abs(out[j].Delta.Ms()) {
			return math.Abs(out[i].Delta.Ms()) > math.Abs(out[j].Delta.Ms())
		}
		return out[i].Name+out[i].Mechanism+out[i].Kind < out[j].Name+out[j].Mechanism+out[j].Kind
	})
	return out
}

// termKey identifies a term by path (or frame), mechanism and kind.
func termKey(path []string, t Term) string {
	k := strings.Join(path, "\n") + "\x00" + t.Mechanism + "\x00" + t.Kind
	if t.Beneath {
		k += "\x00beneath"
	}
	return k
}

func delta(t Term, before, after Duration) TermDelta {
	return TermDelta{Name: t.Name, Frame: t.Frame, AppPath: t.AppPath, Mechanism: t.Mechanism, Kind: t.Kind, Before: before, After: after}
}

// Misses returns the predictions that missed.
func (c *Comparison) Misses() []PredictionCheck {
	var out []PredictionCheck
	for _, p := range c.Predictions {
		if p.Miss {
			out = append(out, p)
		}
	}
	return out
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error { return (&Report{}).writeAny(w, c) }

// WriteText writes the comparison for a terminal.
func (c *Comparison) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("%s: before %d requests, mean %.2f ms, p99 %.2f ms, %.1f/s; after %d requests, mean %.2f ms, p99 %.2f ms, %.1f/s\n",
		c.group, c.Before.Count, c.Before.Mean.Ms(), c.Before.P99.Ms(), c.Before.RPS, c.After.Count, c.After.Mean.Ms(), c.After.P99.Ms(), c.After.RPS)
	for _, w := range c.Warnings {
		ew.printf("warning: %s\n", w)
	}
	if t := c.Host.text(); t != "" {
		ew.printf("host: %s\n", t)
	}
	if len(c.Predictions) == 0 {
		ew.printf("no predictions given (--what-if SPEC): only the term deltas follow\n")
	} else {
		ew.printf("\npredictions from the first trace, measured in the second, with %g %% intervals: %s\n", 100*c.Confidence, c.IntervalMethod)
		ew.printf("hit: the error's interval lies within ±%g%% of the measured mean; miss: wholly outside; inconclusive: it crosses the bar\n", c.MissPct)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		engine := len(c.Predictions) > 0 && c.Predictions[0].Method != ""
		head := "what-if\tpredicted ms\t\tmeasured ms\t\terror\terror 95 %%\tp99 pred\tp99 meas\trps pred\trps meas\t\t"
		if engine {
			head += "method\t"
		}
		termsafe.Fprintf(tw, head+"\n")
		for _, p := range c.Predictions {
			verdict := p.Verdict
			if p.Verdict == VerdictMiss {
				verdict = fmt.Sprintf("MISS by %+.1f ms", p.PredictedMean.Ms()-p.MeasuredMean.Ms())
			}
			format := "%s\t%.2f\t%s\t%.2f\t%s\t%+.1f%%\t%s\t%s\t%.2f\t%.1f\t%.1f\t%s\t"
			args := []any{p.Spec, p.PredictedMean.Ms(), plusMinus(p.PredictedLow, p.PredictedHigh), p.MeasuredMean.Ms(), plusMinus(p.MeasuredLow, p.MeasuredHigh),
				p.ErrorPct, pctRange(p.ErrorLowPct, p.ErrorHighPct), p99Cell(p.PredictedP99), p.MeasuredP99.Ms(), p.PredictedRPS, p.MeasuredRPS, verdict}
			if engine {
				format += "%s\t"
				args = append(args, p.Method)
			}
			termsafe.Fprintf(tw, format+"\n", args...)
		}
		tw.Flush()
		for _, p := range c.Predictions {
			if p.Why != "" {
				termsafe.Fprintf(ew, "  %s, by the %s: %s\n", p.Spec, p.Method, p.Why)
			}
		}
		for _, p := range c.Predictions {
			if p.Decide != "" {
				termsafe.Fprintf(ew, "  %s inconclusive: %s\n", p.Spec, p.Decide)
			}
		}
	}
	ew.printf("\ncritical time per request, by term (largest change first)\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	termsafe.Fprintf(tw, "term\tmechanism\tkind\tbefore ms\tafter ms\tΔ ms\t\n")
	for i, t := range c.Terms {
		if i >= 12 || (t.Before.Ms() < 0.01 && t.After.Ms() < 0.01) {
			break
		}
		termsafe.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%+.2f\t\n", nameOr(t.Name, termName(t.Frame)), frame.Short(t.Mechanism), t.Kind, t.Before.Ms(), t.After.Ms(), t.Delta.Ms())
	}
	tw.Flush()
	return ew.err
}

// p99Cell prints a predicted p99, "n/a" when it is not predicted (0: the
// queueing model gives means only; a timeline prediction queueing at a
// cap).
func p99Cell(d Duration) string {
	if d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", d.Ms())
}

// plusMinus prints an interval's half-width, "±1.20", or "" without one.
func plusMinus(lo, hi *Duration) string {
	if lo == nil || hi == nil {
		return ""
	}
	return fmt.Sprintf("±%.2f", (hi.Ms()-lo.Ms())/2)
}

// pctRange prints an interval in percent, "[-3.0, -0.4]", or "".
func pctRange(lo, hi *float64) string {
	if lo == nil || hi == nil {
		return ""
	}
	return fmt.Sprintf("[%+.1f, %+.1f]", *lo, *hi)
}
