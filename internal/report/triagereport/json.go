package triagereport

import (
	"encoding/json"
	"io"
	"math"
	"time"

	"github.com/latscope/latscope/internal/triage"
)

// JSONVersion is the version of the JSON schema (docs/triage.md).
const JSONVersion = 1

// jsonReport is the JSON form of a Report: seconds as numbers, times in
// RFC 3339, null for a number the data cannot give.
type jsonReport struct {
	Version    int     `json:"version"`
	Job        string  `json:"job"`
	Route      string  `json:"route"`
	Start      string  `json:"start"`
	End        string  `json:"end"`
	StepS      float64 `json:"step_s"`
	ThresholdS float64 `json:"threshold_s"`
	Signal     string  `json:"signal"`
	Steps      int     `json:"steps"`
	// Quantile is the signal's percentile (0.95: the p95), lower than the
	// signal's own when steps had too few observations; Thin counts the
	// instance-steps with too few for it (no value).
	Quantile float64 `json:"quantile"`
	Thin     int     `json:"thin"`
	// MinStallS is the shortest stall of a held step or a hidden-stall
	// warning (rule 1).
	MinStallS float64  `json:"min_stall_s"`
	Queries   []string `json:"queries"`
	Warnings  []string `json:"warnings"`
	// WarningsTotal counts the warnings before they were summed up.
	WarningsTotal int            `json:"warnings_total"`
	Verdict       jsonVerdict    `json:"verdict"`
	Instances     []jsonInstance `json:"instances"`
	BadSteps      []jsonBadStep  `json:"bad_steps"`
	Scope         jsonScope      `json:"scope"`
	DBPath        jsonDBPath     `json:"db_path"`
	Dependency    jsonDependency `json:"dependency"`
	Unwatched     *jsonUnwatched `json:"unwatched"`
	When          jsonWhen       `json:"when"`
}

type jsonRise struct {
	Compared int `json:"compared"`
	Rose     int `json:"rose"`
	// Bounded counts the compared pairs without a baseline whose value
	// was under half the signal's rise: they did not rise, whatever it.
	Bounded   int      `json:"bounded"`
	BaselineS *float64 `json:"baseline_p95_s"`
	BadS      *float64 `json:"bad_p95_s"`
}

type jsonOutboundRise struct {
	Route string `json:"route"`
	Peer  string `json:"peer,omitempty"`
	jsonRise
}

type jsonDependency struct {
	Kind string `json:"kind"`
	// Quantile is the percentile the DB-call and outbound times are
	// compared at (the p95, or the signal's when lower): the *_p95_s
	// fields hold that percentile.
	Quantile     float64            `json:"quantile"`
	DB           jsonRise           `json:"db"`
	Outbound     []jsonOutboundRise `json:"outbound"`
	Uncomparable []jsonUncomparable `json:"uncomparable"`
	Reason       string             `json:"reason,omitempty"`
}

// jsonUncomparable is a route whose outbound calls had values in the
// verdict's bad steps but could not be compared: Thin pairs had too few
// calls (fewer than Need), NoBaseline pairs were on instances with fewer
// than 3 good steps with Need calls (GoodSteps: the most one had).
type jsonUncomparable struct {
	Route      string  `json:"route"`
	Peer       string  `json:"peer,omitempty"`
	Thin       int     `json:"thin"`
	NoBaseline int     `json:"no_baseline"`
	GoodSteps  int     `json:"good_steps"`
	Need       float64 `json:"need"`
}

type jsonUnwatched struct {
	Share     *float64             `json:"share"`
	Slowed    int                  `json:"slowed"`
	Instances []string             `json:"instances"`
	Outbound  []jsonOutboundSlowed `json:"outbound"`
}

type jsonOutboundSlowed struct {
	Route     string   `json:"route"`
	Peer      string   `json:"peer,omitempty"`
	Steps     int      `json:"steps"`
	BaselineS *float64 `json:"baseline_p95_s"`
	WorstS    *float64 `json:"worst_p95_s"`
}

type jsonVerdict struct {
	Scope    string `json:"scope"`
	Instance string `json:"instance"`
	DBPath   string `json:"db_path"`
	// Dependency, Route and Peer are rule 3's: what slowed.
	Dependency string  `json:"dependency"`
	Route      string  `json:"route,omitempty"`
	Peer       string  `json:"peer,omitempty"`
	PeriodS    float64 `json:"period_s"`
	Cause      string  `json:"cause"`
	Rule       string  `json:"rule"`
	Line       string  `json:"line"`
	Next       string  `json:"next"`
}

type jsonInstance struct {
	Name      string      `json:"name"`
	DataSteps int         `json:"data_steps"`
	Bad       []int       `json:"bad"`
	Held      []int       `json:"held"`
	Peer      []int       `json:"peer"`
	Thin      int         `json:"thin"`
	BaselineS *float64    `json:"baseline_s"`
	WorstS    *float64    `json:"worst_s"`
	SignalS   []*float64  `json:"signal_s"`
	DBPath    *jsonDBPath `json:"db_path,omitempty"`
	Host      []jsonHost  `json:"host,omitempty"`
	GC        *jsonGC     `json:"gc,omitempty"`
	Cause     string      `json:"cause,omitempty"`
}

type jsonBadStep struct {
	Index    int      `json:"index"`
	Time     string   `json:"time"`
	Bad      []string `json:"bad"`
	WithData int      `json:"with_data"`
	Class    string   `json:"class"`
}

type jsonScope struct {
	Alone   int            `json:"alone"`
	Local   int            `json:"local"`
	Partial int            `json:"partial"`
	Shared  int            `json:"shared"`
	LocalBy map[string]int `json:"local_by"`
}

type jsonDBPath struct {
	Verdict      string   `json:"verdict"`
	Compared     int      `json:"compared"`
	Rose         int      `json:"rose"`
	Held         int      `json:"held"`
	Baseline95S  *float64 `json:"baseline_p95_s"`
	Baseline99S  *float64 `json:"baseline_p99_s"`
	BadMedian95S *float64 `json:"bad_p95_s"`
	BadMedian99S *float64 `json:"bad_p99_s"`
	Reason       string   `json:"reason,omitempty"`
}

type jsonWhen struct {
	ByMinute    [60]int `json:"by_minute"`
	ByHour      [24]int `json:"by_hour"`
	Clusters    int     `json:"runs"`
	PeriodS     float64 `json:"period_s"`
	PeriodSteps int     `json:"period_steps"`
	Phase       string  `json:"phase,omitempty"`
	OnPhase     int     `json:"on_phase"`
	Hits        int     `json:"hits"`
	Slots       int     `json:"slots"`
	Last        string  `json:"last,omitempty"`
	LastEnd     string  `json:"last_end,omitempty"`
	Next        string  `json:"next,omitempty"`
	// PValue is the period test's (null: no candidate tested), Alpha its
	// level, Draws its Monte Carlo draws; SpanFrom and SpanTo bound the
	// continuous fault of its null; CandidateS is the best candidate's
	// period when none passed.
	PValue     *float64 `json:"p_value"`
	Alpha      float64  `json:"alpha"`
	Draws      int      `json:"draws"`
	SpanFrom   string   `json:"span_from,omitempty"`
	SpanTo     string   `json:"span_to,omitempty"`
	CandidateS float64  `json:"candidate_s,omitempty"`
	Reason     string   `json:"reason,omitempty"`
}

type jsonHost struct {
	Signal string   `json:"signal"`
	Absent bool     `json:"absent"`
	BadS   *float64 `json:"bad_s_per_step"`
	GoodS  *float64 `json:"good_s_per_step"`
	GoodSD *float64 `json:"good_sd_s"`
	Rose   bool     `json:"rose"`
}

// jsonGC is rule 5's GC evidence: the collector's share of the process's
// CPU in the bad and the good steps, and its CPU seconds per step.
type jsonGC struct {
	Absent    bool     `json:"absent"`
	BadShare  *float64 `json:"bad_share"`
	GoodShare *float64 `json:"good_share"`
	GoodSD    *float64 `json:"good_sd"`
	BadCPUS   *float64 `json:"bad_cpu_s_per_step"`
	GoodCPUS  *float64 `json:"good_cpu_s_per_step"`
	Rose      bool     `json:"rose"`
	// Elevated counts the steps whose collector CPU was far over the
	// peers', of Collected with a collection; LeftOut the good ones among
	// them, left out of the baseline; Throughout: GC-heavy throughout;
	// PeersBaseline: the baseline is the other instances' share.
	Elevated      int  `json:"elevated"`
	Collected     int  `json:"collected"`
	LeftOut       int  `json:"left_out"`
	Throughout    bool `json:"throughout"`
	PeersBaseline bool `json:"peers_baseline"`
}

// WriteJSON writes r as indented JSON (schema in docs/triage.md).
func WriteJSON(w io.Writer, r *triage.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonForm(r))
}

// jsonForm is the JSON form of r.
func jsonForm(r *triage.Report) jsonReport {
	j := jsonReport{
		Version: JSONVersion, Job: r.Job, Route: r.Route, Start: rfc(r.Start), End: rfc(r.End),
		StepS: r.Step.Seconds(), ThresholdS: r.Threshold.Seconds(), Signal: r.Signal, Steps: r.Steps, Quantile: r.Quantile, Thin: r.Thin, MinStallS: r.MinStall,
		Queries: nonNil(r.Queries), Warnings: nonNil(r.Warnings), WarningsTotal: r.WarningsTotal,
		Verdict: jsonVerdict{Scope: r.Verdict.Scope, Instance: r.Verdict.Instance, DBPath: r.Verdict.DBPath,
			Dependency: r.Verdict.Dependency.String(), Route: r.Verdict.Route, Peer: r.Verdict.Peer,
			PeriodS: r.Verdict.Period.Seconds(), Cause: r.Verdict.Cause, Rule: r.Verdict.Rule, Line: r.Verdict.Line, Next: r.Verdict.Next},
		Scope:  jsonScope{r.Scope.Alone, r.Scope.Local, r.Scope.Partial, r.Scope.Shared, r.Scope.LocalBy},
		DBPath: dbPathJSON(r.DBPath),
		When:   whenJSON(r.When),
	}
	j.Dependency, j.Unwatched = dependencyJSON(r.Dependency), unwatchedJSON(r.Unwatched)
	j.Instances = []jsonInstance{}
	for _, ir := range r.Instances {
		ji := jsonInstance{Name: ir.Name, DataSteps: ir.DataSteps, Bad: append([]int{}, ir.Bad...), Held: append([]int{}, ir.Held...), Peer: append([]int{}, ir.Peer...), Thin: ir.Thin,
			BaselineS: num(ir.Baseline), WorstS: num(ir.Worst), Cause: ir.Cause}
		for _, v := range ir.Signal {
			ji.SignalS = append(ji.SignalS, num(v))
		}
		if len(ir.Bad) > 0 {
			e := dbPathJSON(ir.DBPath)
			ji.DBPath = &e
		}
		for _, h := range ir.Host {
			ji.Host = append(ji.Host, jsonHost{Signal: h.Signal.String(), Absent: h.Absent, BadS: num(h.Bad), GoodS: num(h.Good), GoodSD: num(h.GoodSD), Rose: h.Rose})
		}
		if len(ir.Bad) > 0 {
			g := ir.GC
			ji.GC = &jsonGC{Absent: g.Absent, BadShare: num(g.Bad), GoodShare: num(g.Good), GoodSD: num(g.GoodSD), BadCPUS: num(g.BadCPU), GoodCPUS: num(g.GoodCPU), Rose: g.Rose,
				Elevated: g.Elevated, Collected: g.Collected, LeftOut: g.LeftOut, Throughout: g.Throughout, PeersBaseline: g.Peers}
		}
		j.Instances = append(j.Instances, ji)
	}
	j.BadSteps = []jsonBadStep{}
	for _, b := range r.BadSteps {
		j.BadSteps = append(j.BadSteps, jsonBadStep{Index: b.Index, Time: rfc(b.Time), Bad: b.Bad, WithData: b.WithData, Class: b.Class.String()})
	}
	return j
}

func riseJSON(r triage.Rise) jsonRise {
	return jsonRise{Compared: r.Compared, Rose: r.Rose, Bounded: r.Bounded, BaselineS: num(r.Baseline), BadS: num(r.Bad)}
}

func dependencyJSON(e triage.DependencyEvidence) jsonDependency {
	j := jsonDependency{Kind: e.Kind.String(), Quantile: e.Quantile, DB: riseJSON(e.DB), Outbound: []jsonOutboundRise{}, Uncomparable: []jsonUncomparable{}, Reason: e.Reason}
	for _, o := range e.Outbound {
		j.Outbound = append(j.Outbound, jsonOutboundRise{Route: o.Route, Peer: o.Peer, jsonRise: riseJSON(o.Rise)})
	}
	for _, o := range e.Uncomparable {
		j.Uncomparable = append(j.Uncomparable, jsonUncomparable{Route: o.Route, Peer: o.Peer, Thin: o.Thin, NoBaseline: o.NoBaseline, GoodSteps: o.Good, Need: triage.VoteNeed(e.Quantile)})
	}
	return j
}

func unwatchedJSON(u *triage.Unwatched) *jsonUnwatched {
	if u == nil {
		return nil
	}
	j := &jsonUnwatched{Share: num(u.Share), Slowed: u.Slowed, Instances: nonNil(u.Instances), Outbound: []jsonOutboundSlowed{}}
	for _, o := range u.Outbound {
		j.Outbound = append(j.Outbound, jsonOutboundSlowed{Route: o.Route, Peer: o.Peer, Steps: o.Steps, BaselineS: num(o.Baseline), WorstS: num(o.Worst)})
	}
	return j
}

func dbPathJSON(e triage.DBPathEvidence) jsonDBPath {
	return jsonDBPath{Verdict: e.Verdict, Compared: e.Compared, Rose: e.Rose, Held: e.Held,
		Baseline95S: num(e.Baseline95), Baseline99S: num(e.Baseline99),
		BadMedian95S: num(e.BadMedian95), BadMedian99S: num(e.BadMedian99), Reason: e.Reason}
}

func whenJSON(w triage.WhenEvidence) jsonWhen {
	return jsonWhen{ByMinute: w.ByMinute, ByHour: w.ByHour, Clusters: w.Clusters,
		PeriodS: w.Period.Seconds(), PeriodSteps: w.PeriodSteps, Phase: rfc(w.Phase),
		OnPhase: w.OnPhase, Hits: w.Hits, Slots: w.Slots,
		Last: rfc(w.Last), LastEnd: rfc(w.LastEnd), Next: rfc(w.Next),
		PValue: num(w.PValue), Alpha: w.Alpha, Draws: w.Draws, SpanFrom: rfc(w.SpanFrom), SpanTo: rfc(w.SpanTo),
		CandidateS: w.Candidate.Seconds(), Reason: w.Reason}
}

// num returns &v, or nil for NaN.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// rfc formats t in RFC 3339 UTC, "" for the zero time.
func rfc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
