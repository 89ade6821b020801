package jvm

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/budget"
	"github.com/latscope/latscope/internal/frame"
	jvma "github.com/latscope/latscope/internal/jvm" // the JVM request analysis (this package is the lab scenario)
	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/pipeline"
	"github.com/latscope/latscope/internal/queueing"
	"github.com/latscope/latscope/internal/units"
	"github.com/latscope/latscope/internal/whatif"
)

// The saturation path: /lock's route, its handler method, and the frame
// that acquires its lock (the hold's site, io.latscope.Holds): the pool of
// one the prediction engine is given, as `latscope predict --pool
// JvmService.lockedSection:1` takes it.
const (
	LockRoute   = "/lock"
	LockHandler = "JvmService.lockRoute"
	LockFrame   = "JvmService.lockedSection"
)

// satWarmup is the saturating run's warm-up: it follows the recorded run
// in the same JVM, compiled already; the clients only need to fill the
// lock's queue.
const satWarmup = 3 * time.Second

// SaturateRun is the saturation path: /lock recorded at Clients with JFR,
// its throughput at SatClients predicted from that recording by latscope's
// prediction engine (package whatif), then measured at SatClients in the
// same JVM.
type SaturateRun struct {
	Clients    int    `json:"recorded_clients"`
	SatClients int    `json:"saturating_clients"`
	LockFrame  string `json:"lock_frame"`
	Recording  string `json:"recording"`
	Results    string `json:"results"`
	SatResults string `json:"saturating_results"`
	// Command is the `latscope predict` command that gives the same
	// prediction by hand.
	Command string `json:"command"`
	// Low is the recorded run's client side, High the saturating run's.
	Low  LoadSummary `json:"recorded_load"`
	High LoadSummary `json:"saturating_load"`
	// OwnLow and OwnHigh are the service's own timings in each window.
	OwnLow  LockOwn `json:"own_recorded"`
	OwnHigh LockOwn `json:"own_saturating"`
	// CPULowMs and CPUHighMs are the process's utime+stime per /lock
	// request in each window (/proc: JIT, GC, JFR and the HTTP server's
	// own threads included).
	CPULowMs  float64 `json:"process_cpu_per_request_recorded_ms"`
	CPUHighMs float64 `json:"process_cpu_per_request_saturating_ms"`
	// Library is what the recording says, through the Java library's
	// events.
	Library LockLibrary `json:"library"`
	// Prediction is the engine's, from the recording.
	Prediction LockPrediction `json:"prediction"`
	// MeasuredRPS is the saturating run's throughput: the mean of its
	// per-second completions over Seconds whole seconds of the window, with
	// the standard error of that mean (each second a batch).
	MeasuredRPS float64  `json:"measured_rps"`
	MeasuredSE  float64  `json:"measured_rps_se"`
	Seconds     int      `json:"seconds"`
	Findings    []string `json:"findings"`
}

// LockOwn is the service's own timing of /lock per request over a window
// (ms): System.nanoTime for wall time, ThreadMXBean for thread CPU, with
// the standard errors of the CPU means (s/√n over the window's requests).
type LockOwn struct {
	Requests    int64   `json:"requests"`
	MeanMs      float64 `json:"mean_ms"`
	CPUMs       float64 `json:"request_cpu_ms"`
	CPUSEMs     float64 `json:"request_cpu_se_ms"`
	WaitMs      float64 `json:"lock_wait_ms"`
	HoldMs      float64 `json:"lock_hold_ms"`
	HoldCPUMs   float64 `json:"lock_cpu_ms"`
	HoldCPUSEMs float64 `json:"lock_cpu_se_ms"`
	// HandOffs are the acquires that found the lock held, HandOffMs the
	// mean time from the release to such a next holder's start.
	HandOffs  int64   `json:"hand_offs"`
	HandOffMs float64 `json:"hand_off_ms"`
}

// LockLibrary is the recording's view of /lock through the Java library
// (request mode), per request (ms).
type LockLibrary struct {
	RequestMode bool    `json:"request_mode"`
	Requests    int     `json:"requests"`
	MeanMs      float64 `json:"mean_ms"`
	// CPUExact: the request CPU is the library's ThreadMXBean figure (else
	// execution samples).
	CPUExact bool    `json:"cpu_exact"`
	CPUMs    float64 `json:"request_cpu_ms"`
	// HoldCPUMs is the CPU inside the lock's hold (latscope.Hold's
	// cpuTime), HoldMs the hold's term (its time in no recorded wait).
	HoldCPUMs float64 `json:"hold_cpu_ms"`
	HoldMs    float64 `json:"hold_ms"`
	// HandOffMs is the mean time the lock stayed free at a contended
	// hand-off (jvma.HandOff), Contended how many there were.
	HandOffMs float64 `json:"hand_off_ms"`
	Contended int     `json:"contended_hand_offs"`
}

// LockPrediction is the engine's prediction of clients=SatClients.
type LockPrediction struct {
	Spec   string `json:"spec"`
	Method string `json:"method"`
	Why    string `json:"why"`
	// RPS is the engine's throughput (the closed model's clients over the
	// anchored cycle), MeanMs its mean latency; RPSSE the standard error
	// of RPS from the engine's interval (0 when it gave none).
	RPS    float64 `json:"rps"`
	RPSSE  float64 `json:"rps_se"`
	RPSDF  float64 `json:"rps_se_df,omitempty"`
	MeanMs float64 `json:"mean_ms"`
	// ModelRPS is the queueing model's own throughput after the change.
	ModelRPS   float64 `json:"model_rps"`
	Bottleneck string  `json:"bottleneck"`
	BottleUtil float64 `json:"bottleneck_utilisation"`
	// The model's demands per request (ms) and its fit at the recorded
	// concurrency.
	CPUDemandMs  float64 `json:"cpu_demand_ms"`
	Cores        int     `json:"cores"`
	LockDemandMs float64 `json:"lock_demand_ms"`
	ModelLowRPS  float64 `json:"model_rps_recorded"`
	MeasLowRPS   float64 `json:"measured_rps_recorded"`
	// HoldsAloneRPS is the engine's throughput with the lock charged its
	// holds alone, without the hand-off (a diagnostic, not checked).
	HoldsAloneRPS float64 `json:"holds_alone_rps"`
	// OwnHandOffRPS is the engine's throughput with the lock charged, at
	// each hold, the service's own hand-off instead of the analysis's (a
	// diagnostic, not checked).
	OwnHandOffRPS float64 `json:"own_hand_off_rps"`
	// OthersShare is the share of the cores the model took the machine's
	// other processes to hold from the service (queueing.Model's
	// OthersShare; 0 when its waits showed it had the cores).
	OthersShare float64 `json:"others_share,omitempty"`
}

// saturate runs the saturation path on a service of its own.
func (r *runner) saturate(ctx context.Context) (*SaturateRun, error) {
	c := r.cfg
	p, err := r.service(ctx, "svc-lock", "--mode", "serial")
	if err != nil {
		return nil, err
	}
	defer p.stop()
	length := max(r.env.Profile.Window, minWindow)
	lowName, highName := fmt.Sprintf("lock-%d", c.LockClients), fmt.Sprintf("lock-%d", c.SatClients)
	w, err := r.measure(ctx, p, lowName, LockRoute, c.LockClients, 0, max(r.env.Profile.Warmup, jvmWarmup), length)
	if err != nil {
		return nil, err
	}
	s := &SaturateRun{Clients: c.LockClients, SatClients: c.SatClients, LockFrame: LockFrame, Recording: rel(r.env.Out, w.Recording),
		Results: rel(r.env.Out, w.Results), Low: summarize(w.Load), OwnLow: lockOwn(w.Own), CPULowMs: perRequest(w.CPU, w.Own.LockRequests)}
	_, res, ch, a, err := analyseWith(ctx, w, LockHandler)
	if err != nil {
		return nil, err
	}
	s.Library = library(res, a)
	s.Findings = findingTexts(res, ch)
	if s.Prediction, err = predictSaturation(res, a, c, s.OwnLow.HandOffMs); err != nil {
		return nil, err
	}
	s.Command = fmt.Sprintf("latscope predict --clients %d --pool %s:1 --what-if %s %s", c.LockClients, LockFrame, s.Prediction.Spec, s.Recording)
	r.env.Logf("%s: %.1f/s, mean %.2f ms; engine: %s predicts %.1f/s (%s), bottleneck %s", lowName, s.Low.RPS, s.Low.MeanMs,
		s.Prediction.Spec, s.Prediction.RPS, s.Prediction.Method, s.Prediction.Bottleneck)
	hw, err := r.drive(ctx, p, highName, LockRoute, c.SatClients, 0, satWarmup, length, false)
	if err != nil {
		return nil, err
	}
	s.SatResults, s.High, s.OwnHigh, s.CPUHighMs = rel(r.env.Out, hw.Results), summarize(hw.Load), lockOwn(hw.Own), perRequest(hw.CPU, hw.Own.LockRequests)
	counts, err := perSecond(hw.Results, hw.Start, hw.End)
	if err != nil {
		return nil, err
	}
	s.Seconds = len(counts)
	s.MeasuredRPS, s.MeasuredSE = meanAndSE(counts)
	r.env.Logf("%s: %.1f/s measured (per-second mean over %d s), predicted %.1f/s", highName, s.MeasuredRPS, s.Seconds, s.Prediction.RPS)
	return s, nil
}

// predictSaturation runs latscope's one prediction engine (whatif.Evaluate,
// as `latscope predict` and `compare` do) on the recording's analysis: the
// lock as a pool of one named by its acquiring frame, the recorded
// concurrency as the clients, and the what-if clients=SatClients. Beside
// it, two diagnostics (not checked): the same with the lock charged its
// holds alone, and with the service's own hand-off (ownHandOffMs) in place
// of the analysis's.
func predictSaturation(res *budget.Result, a *jvma.Analyzer, cfg Config, ownHandOffMs float64) (LockPrediction, error) {
	spec, err := whatif.ParseSpec(fmt.Sprintf("clients=%d", cfg.SatClients))
	if err != nil {
		return LockPrediction{}, err
	}
	in := whatif.Inputs{Clients: float64(cfg.LockClients), Pools: []queueing.PoolSpec{{Name: LockFrame, Size: 1}}}
	ev, err := whatif.Evaluate(pipeline.JFRDemands(res, a, -1), LockRoute, in, []whatif.Spec{spec})
	if err != nil {
		return LockPrediction{}, fmt.Errorf("predict: %w", err)
	}
	var diag [2]float64
	for i, h := range []time.Duration{0, time.Duration(ownHandOffMs * 1e6)} {
		d, err := whatif.Evaluate(pipeline.JFRDemands(res, a, h), LockRoute, in, []whatif.Spec{spec})
		if err != nil {
			return LockPrediction{}, fmt.Errorf("predict (hand-off %s): %w", h, err)
		}
		if len(d.Outcomes) == 1 {
			diag[i] = units.Round3(d.Outcomes[0].RPS)
		}
	}
	if ev.Model == nil {
		return LockPrediction{}, fmt.Errorf("predict: no queueing model of the recording: %s", ev.Unbuilt)
	}
	o := ev.Outcomes[0]
	if !(o.RPS > 0) || o.After == nil {
		return LockPrediction{}, fmt.Errorf("predict %s: no throughput predicted (%s: %s)", spec.Text, o.Method, o.Why)
	}
	p := LockPrediction{Spec: spec.Text, Method: string(o.Method), Why: o.Why, RPS: units.Round3(o.RPS), MeanMs: units.Ms(o.Mean),
		ModelRPS: units.Round3(o.After.RPS), Bottleneck: o.After.Bottleneck,
		ModelLowRPS: units.Round3(ev.Validation.ModelRPS), MeasLowRPS: units.Round3(ev.Validation.MeasuredRPS)}
	if o.Interval && o.Mean > 0 {
		p.RPSSE = units.Round3(o.RPS * o.SE / float64(o.Mean))
		if !math.IsInf(o.DF, 0) && !math.IsNaN(o.DF) {
			p.RPSDF = o.DF // 0 in the JSON: a normal quantile
		}
	}
	p.HoldsAloneRPS, p.OwnHandOffRPS = diag[0], diag[1]
	for _, u := range o.After.Resources {
		if u.Name == o.After.Bottleneck {
			p.BottleUtil = units.Round3(u.Util)
		}
	}
	for _, r := range ev.Model.Resources {
		switch {
		case r.Kind == queueing.CPU:
			p.CPUDemandMs, p.Cores = units.Round3(r.DemandMs), r.Servers
			p.OthersShare = units.Round3(ev.Model.OthersShare)
		case r.Kind == queueing.Pool && r.Name == LockFrame:
			p.LockDemandMs = units.Round3(r.DemandMs)
		}
	}
	return p, nil
}

// library is /lock in the recording, per request, through the Java
// library's events.
func library(res *budget.Result, a *jvma.Analyzer) LockLibrary {
	g := groupOf(res, LockRoute)
	if g == nil || g.Count == 0 {
		return LockLibrary{}
	}
	n := float64(g.Count)
	l := LockLibrary{RequestMode: true, Requests: g.Count, MeanMs: units.Round3(g.Latency.Mean / 1e6), CPUExact: a.RequestCPUExact}
	held := a.HeldCPU[LockRoute]
	if a.RequestCPU >= 0 {
		l.CPUMs = units.Round3((a.RequestCPU*1e9 + float64(held)) / n / 1e6)
	}
	l.HoldCPUMs = units.Round3(float64(held) / n / 1e6)
	for _, ts := range g.Terms {
		if t := res.Terms[ts.Term]; t.Kind == frame.Running && strings.HasPrefix(t.Mechanism, jvma.HoldMechanism) && jvma.MatchFrame(t.Frame, LockFrame) {
			l.HoldMs += float64(ts.Wait) / n / 1e6
		}
	}
	l.HoldMs = units.Round3(l.HoldMs)
	for f, h := range a.HandOffs {
		if jvma.MatchFrame(f, LockFrame) {
			l.HandOffMs, l.Contended = units.Ms(h.Mean), h.Contended
		}
	}
	return l
}

// lockOwn is the service's own timing of /lock over a window, per request.
func lockOwn(s ownStats) LockOwn {
	n := s.LockRequests
	if n == 0 {
		return LockOwn{}
	}
	per := func(ns int64) float64 { return units.Round3(float64(ns) / float64(n) / 1e6) }
	o := LockOwn{Requests: n, MeanMs: per(s.LockTotalNs), CPUMs: per(s.ReqCPUNs), WaitMs: per(s.LockWaitNs), HoldMs: per(s.LockHoldNs), HoldCPUMs: per(s.LockCPUNs)}
	o.CPUSEMs, o.HoldCPUSEMs = seMs(s.ReqCPUNs, s.ReqCPUSq, n), seMs(s.LockCPUNs, s.LockCPUSq, n)
	if s.HandOffs > 0 {
		o.HandOffs, o.HandOffMs = s.HandOffs, units.Round3(float64(s.HandOffNs)/float64(s.HandOffs)/1e6)
	}
	return o
}

// seMs is the standard error (ms) of the mean of n values whose sum is
// sumNs (ns) and sum of squares sqUs2 (µs²): s/√n, the requests taken as
// independent. 0 (none) with fewer than two.
func seMs(sumNs int64, sqUs2 float64, n int64) float64 {
	if n < 2 {
		return 0
	}
	m := float64(sumNs) / 1000 / float64(n) // µs
	v := (sqUs2 - float64(n)*m*m) / float64(n-1)
	return units.Round3(math.Sqrt(max(0, v)/float64(n)) / 1000)
}

// perRequest is d per request (ms); 0 without requests.
func perRequest(d time.Duration, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return units.Round3(units.Ms(d) / float64(n))
}

// perSecond counts the load's successful completions (warm-up excluded) in
// each whole second from from to to.
func perSecond(results string, from, to time.Time) ([]float64, error) {
	k := int(to.Sub(from) / time.Second)
	if k <= 0 {
		return nil, fmt.Errorf("%s: the window %s is shorter than a second", results, to.Sub(from))
	}
	f, err := os.Open(results)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	counts := make([]float64, k)
	dec := loadgen.NewDecoder(f)
	for {
		var r loadgen.Result
		if err := dec(&r); err == io.EOF {
			return counts, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", results, err)
		}
		if r.Error != "" || r.Warmup || r.End().Before(from) {
			continue
		}
		if i := int(r.End().Sub(from) / time.Second); i < k {
			counts[i]++
		}
	}
}

// meanAndSE is the mean of xs and its standard error s/√k (each value a
// batch); 0 (none) with fewer than two.
func meanAndSE(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	if len(xs) < 2 {
		return units.Round3(m), 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return units.Round3(m), units.Round3(math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs))))
}
