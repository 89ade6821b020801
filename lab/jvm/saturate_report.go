package jvm

import (
	"fmt"
	"math"
	"strings"

	htmlreport "github.com/latscope/latscope/internal/report/html"
	"github.com/latscope/latscope/internal/report/markdown"
	"github.com/latscope/latscope/internal/stats"
	"github.com/latscope/latscope/lab"
)

// The saturation path's tolerances, from issue #33's bar: predict at a
// saturating concurrency within 10 % of the measured throughput; the
// library's request CPU within 5 % of ThreadMXBean. The hold's CPU is
// held to 10 %: the library's hold begins before the service's own timer
// (the StackWalker that names the hold's site runs inside it).
const (
	satRPSTolerance  = 10.0
	satCPUTolerance  = 5.0
	satHoldTolerance = 10.0
)

// How the saturation checks' standard errors are estimated.
const (
	methodSatRPS = "delta method: the engine's 95 % interval of its throughput (whatif.Evaluate; exact when it gave none) and the measured throughput's per-second batch means (SE s/√k over the window's k whole seconds)"
	methodSatOwn = "the service's mean over its requests in the window, SE s/√n from its cumulative sums (ThreadMXBean); the library's figure, over the recording's requests of the same window, taken as exact"
)

// saturateChecks judges the saturation path: the engine's throughput at
// SatClients against the measured, the library's request CPU and the
// hold's CPU against the service's own ThreadMXBean timers, and the
// bottleneck the model names.
func saturateChecks(s *SaturateRun) []lab.Check {
	if s == nil {
		return nil
	}
	var cs []lab.Check
	meas := stats.Estimate{Value: s.MeasuredRPS, SE: s.MeasuredSE, DF: float64(s.Seconds - 1)}
	if s.Seconds < 2 {
		meas.SE = math.NaN()
	}
	pred := stats.Estimate{Value: s.Prediction.RPS, SE: s.Prediction.RPSSE, DF: s.Prediction.RPSDF}
	if pred.DF == 0 {
		pred.DF = math.Inf(1)
	}
	errE := stats.Quotient(pred, meas).Affine(100, -100).WithValue(lab.ErrPct(s.Prediction.RPS, s.MeasuredRPS))
	ck := lab.Estimated(fmt.Sprintf("saturate: throughput at %d clients, predicted vs measured (error %%)", s.SatClients), "", lab.Within(satRPSTolerance), errE, methodSatRPS)
	ck.Got = fmt.Sprintf("%.1f (%.1f vs %.1f/s)", errE.Value, s.Prediction.RPS, s.MeasuredRPS)
	cs = append(cs, ck)
	own := s.OwnLow
	cs = append(cs, ownRatio("saturate: the library's request CPU / the service's ThreadMXBean (%)", satCPUTolerance, s.Library.CPUMs, own.CPUMs, own.CPUSEMs, own.Requests))
	cs = append(cs, ownRatio("saturate: the hold's CPU, library / the service's own timer (%)", satHoldTolerance, s.Library.HoldCPUMs, own.HoldCPUMs, own.HoldCPUSEMs, own.Requests))
	got := s.Prediction.Bottleneck
	if got == "" {
		got = "none"
	}
	// /lock is built so that the lock bounds it on cores of its own; where
	// the machine's other processes held cores from the service (the model
	// charged their share), the CPU bounds it first, as measured (issue #33:
	// a shared host gave the JVM about one core of two).
	want, ok := "the lock, "+s.LockFrame, got == s.LockFrame
	if o := s.Prediction.OthersShare; o > 0 {
		want = fmt.Sprintf("the lock, %s, or the CPU: the host's other processes held %.0f %% of its cores", s.LockFrame, 100*o)
		ok = ok || got == "CPU"
	}
	cs = append(cs, lab.Exact(fmt.Sprintf("saturate: the model's bottleneck at %d clients", s.SatClients), want, got, ok))
	return cs
}

// ownRatio checks 100·lib/own within ±tol % of 100, own the service's mean
// of n requests with standard error se (methodSatOwn).
func ownRatio(name string, tol, lib, own, se float64, n int64) lab.Check {
	e := stats.Estimate{Value: math.NaN(), SE: math.NaN(), DF: math.NaN()}
	if own > 0 {
		r := 100 * lib / own
		e = stats.Estimate{Value: r, SE: r * se / own, DF: float64(n - 1)}
		if se == 0 || n < 2 {
			e.SE = math.NaN()
		}
	}
	ck := lab.Estimated(name, "", lab.Between(100-tol, 100+tol), e, methodSatOwn)
	ck.Got = fmt.Sprintf("%.1f (%.3f vs %.3f ms)", e.Value, lib, own)
	return ck
}

// saturateSection writes the report's section on the saturation path.
func saturateSection(b *strings.Builder, cfg Config, s *SaturateRun) {
	if s == nil {
		return
	}
	p := s.Prediction
	fmt.Fprintf(b, "## 7. A CPU-bound lock at a saturating concurrency\n\n`/lock`: %s of CPU, an upstream call asking for %s (`?ms=`), then %s of CPU holding a monitor, marked with `io.latscope.Holds.locked` (the hold and its CPU recorded; the lock named by its acquiring frame, `%s`). "+
		"Demands: about %.1f ms of CPU a request (%.0f/s on %d cores) and %.1f ms of lock (%.0f/s): the lock is the bottleneck. "+
		"Recorded with JFR at %d clients; latscope's prediction engine (package whatif, as `latscope predict` runs it) predicts `%s` from that recording; then measured at %d clients in the same JVM (no recording), on %d workers.\n\n",
		cfg.LockPre, cfg.LockUpstream, cfg.LockCPU, s.LockFrame,
		msOf(cfg.LockPre+cfg.LockCPU), float64(1000*max(p.Cores, 1))/msOf(cfg.LockPre+cfg.LockCPU), max(p.Cores, 1), msOf(cfg.LockCPU), 1000/msOf(cfg.LockCPU),
		s.Clients, p.Spec, s.SatClients, serverThreads)
	t := markdown.NewTable("run", "clients", "rps", "client mean ms", "own mean ms", "own request CPU ms", "own lock wait ms", "own hold ms", "own hold CPU ms", "process CPU ms/request").RightFrom(1)
	t.Row("recorded (JFR)", fmt.Sprint(s.Clients), fmt.Sprintf("%.1f", s.Low.RPS), ms(s.Low.MeanMs), ms(s.OwnLow.MeanMs), fmt.Sprintf("%.3f", s.OwnLow.CPUMs),
		ms(s.OwnLow.WaitMs), fmt.Sprintf("%.3f", s.OwnLow.HoldMs), fmt.Sprintf("%.3f", s.OwnLow.HoldCPUMs), fmt.Sprintf("%.3f", s.CPULowMs))
	t.Row("saturating", fmt.Sprint(s.SatClients), fmt.Sprintf("%.1f", s.High.RPS), ms(s.High.MeanMs), ms(s.OwnHigh.MeanMs), fmt.Sprintf("%.3f", s.OwnHigh.CPUMs),
		ms(s.OwnHigh.WaitMs), fmt.Sprintf("%.3f", s.OwnHigh.HoldMs), fmt.Sprintf("%.3f", s.OwnHigh.HoldCPUMs), fmt.Sprintf("%.3f", s.CPUHighMs))
	b.WriteString(t.String())
	l := s.Library
	exact := "ThreadMXBean, exact"
	if !l.CPUExact {
		exact = "execution samples"
	}
	fmt.Fprintf(b, "\nThe recording through the Java library (%d requests, mean %.2f ms): request CPU %.3f ms (%s) against the service's %.3f ms; the hold's CPU %.3f ms against %.3f ms; the hold's term %.3f ms against the service's hold %.3f ms. "+
		"The analysis counts %d contended hand-offs, the lock free %.3f ms at each; the service counted %d acquires that found it held, %.3f ms from the release to the next holder's start.\n\n",
		l.Requests, l.MeanMs, l.CPUMs, exact, s.OwnLow.CPUMs, l.HoldCPUMs, s.OwnLow.HoldCPUMs, l.HoldMs, s.OwnLow.HoldMs, l.Contended, l.HandOffMs, s.OwnLow.HandOffs, s.OwnLow.HandOffMs)
	interval := ""
	if p.RPSSE > 0 {
		df := p.RPSDF
		if df == 0 {
			df = math.Inf(1)
		}
		lo, hi := stats.Estimate{Value: p.RPS, SE: p.RPSSE, DF: df}.Interval()
		interval = " [" + lab.RangeWords(lo, hi) + "]"
	}
	fmt.Fprintf(b, "The model (%s): CPU %.3f ms a request on %d cores, the lock %.3f ms (its hold and the hand-off); at %d clients it gives %.1f/s against %.1f/s recorded. `%s`: %.1f/s%s, mean %.2f ms (the model alone: %.1f/s); bottleneck %s (%.0f %% busy). %s. Diagnostics, not checked: the lock charged its holds alone, %.1f/s; its holds and the service's own hand-off (%.3f ms), %.1f/s.\n\n",
		p.Method, p.CPUDemandMs, p.Cores, p.LockDemandMs, s.Clients, p.ModelLowRPS, p.MeasLowRPS, p.Spec, p.RPS, interval, p.MeanMs, p.ModelRPS, p.Bottleneck, 100*p.BottleUtil, capitalize(p.Why),
		p.HoldsAloneRPS, s.OwnLow.HandOffMs, p.OwnHandOffRPS)
	fmt.Fprintf(b, "Measured at %d clients: %.1f/s (per-second completions over %d s, SE %.1f): the prediction is off by %+.1f %%.\n\n    %s\n\n",
		s.SatClients, s.MeasuredRPS, s.Seconds, s.MeasuredSE, lab.ErrPct(p.RPS, s.MeasuredRPS), s.Command)
}

// saturateHTML adds the saturation path's section to the HTML page.
func saturateHTML(pg *htmlreport.Page, s *SaturateRun) error {
	if s == nil {
		return nil
	}
	t := htmlreport.Table{Columns: []htmlreport.Column{{Name: "figure"}, {Name: "latscope", Num: true}, {Name: "measured", Num: true}}}
	row := func(name, a, b string) {
		t.Rows = append(t.Rows, []htmlreport.Cell{{Text: name}, {Text: a}, {Text: b}})
	}
	row(fmt.Sprintf("throughput at %d clients (/s)", s.SatClients), fmt.Sprintf("%.1f", s.Prediction.RPS), fmt.Sprintf("%.1f", s.MeasuredRPS))
	row(fmt.Sprintf("throughput at %d clients, recorded (/s)", s.Clients), fmt.Sprintf("%.1f", s.Prediction.ModelLowRPS), fmt.Sprintf("%.1f", s.Prediction.MeasLowRPS))
	row("request CPU (ms)", fmt.Sprintf("%.3f", s.Library.CPUMs), fmt.Sprintf("%.3f", s.OwnLow.CPUMs))
	row("hold's CPU (ms)", fmt.Sprintf("%.3f", s.Library.HoldCPUMs), fmt.Sprintf("%.3f", s.OwnLow.HoldCPUMs))
	row("bottleneck", s.Prediction.Bottleneck, s.LockFrame)
	return addTable(pg, "A CPU-bound lock at a saturating concurrency", fmt.Sprintf("/lock recorded at %d clients; the prediction engine's clients=%d against the measured throughput; the Java library's CPU against the service's ThreadMXBean timers.", s.Clients, s.SatClients), t)
}

// msOf is d in ms.
func msOf(d interface{ Seconds() float64 }) float64 { return 1000 * d.Seconds() }

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
