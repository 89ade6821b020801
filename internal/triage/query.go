package triage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/model"

	"github.com/latscope/latscope/internal/httpurl"
	"github.com/latscope/latscope/internal/termsafe"
)

// Config says which Prometheus to ask about which fleet and time range.
type Config struct {
	URL   string // Prometheus base URL
	Job   string // job label ("" = all jobs that have the metrics)
	Route string // route label filter ("" = all)
	// Start and End bound the analysed range; both are rounded down to a
	// multiple of Step (so a step still in progress is left out).
	Start, End time.Time
	Step       time.Duration // the "minute": bucket width of the analysis (0: DefaultStep)
	Threshold  time.Duration // DB-call p95 (or request p99) threshold (0: DefaultThreshold)
	Signal     string        // "db" (DB-call p95, default) or "request" (request p99)
	// BearerToken, or Username and Password, authenticate to Prometheus.
	BearerToken, Username, Password string
	// Timeout bounds each query (0: DefaultTimeout).
	Timeout time.Duration
	// MaxResponseBytes bounds the body of each answer
	// (0: DefaultMaxResponseBytes); a larger one is ErrTooLarge.
	MaxResponseBytes int64
}

// Defaults of Config.
const (
	DefaultStep      = time.Minute
	DefaultThreshold = 50 * time.Millisecond
	DefaultTimeout   = 30 * time.Second
	// DefaultMaxResponseBytes bounds an answer's body: 11,000 points of
	// 1,000 series take about 30 MB of JSON.
	DefaultMaxResponseBytes = 64 << 20
	// MaxSteps bounds the number of steps of one analysis (Prometheus
	// itself refuses more than 11,000 points per series).
	MaxSteps = 11000
	// MaxStep bounds the step: the rules look at minutes and hours, and
	// Lookback steps of it must fit a time.Duration many times over.
	MaxStep = 24 * time.Hour
)

// MinTime and MaxTime bound the range: a time before the Unix epoch is no
// Prometheus sample's, and one past MaxTime is a typo (the arithmetic on
// the range, in time.Duration, would overflow near year 2262).
var (
	MinTime = time.Unix(0, 0).UTC()
	MaxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// The errors Run wraps, for errors.Is.
var (
	ErrUnreachable = errors.New("cannot reach Prometheus")
	ErrAuth        = errors.New("Prometheus refused the credentials")
	ErrBadQuery    = errors.New("bad query")
	ErrNoData      = errors.New("no latscope metrics")
	ErrConfig      = errors.New("bad configuration")
	ErrTooLarge    = errors.New("answer too large")
)

// Run queries Prometheus and applies the rules.
func Run(ctx context.Context, c Config) (*Report, error) {
	in, f, err := fetch(ctx, c)
	if err != nil {
		return nil, httpurl.RedactError(err)
	}
	r := Analyze(in, Params{Threshold: f.c.Threshold, Signal: f.c.Signal})
	r.Job, r.Route, r.Queries = c.Job, c.Route, f.queries
	r.Warnings = append(f.warningLines(), r.Warnings...)
	r.WarningsTotal += f.nWarnings
	return r, nil
}

// fetcher holds one Fetch's client and what it asked.
type fetcher struct {
	c       Config
	url     string // c.URL without its password, for messages
	api     promAPI
	r       promRange
	queries []string
	// warnings are Prometheus's distinct warnings, in the order first
	// seen, at most maxPromWarnings; nWarnings counts them all.
	warnings  []promWarning
	nWarnings int
}

// maxPromWarnings bounds the distinct warnings of Prometheus a report
// lists, and maxWarningBytes the length of each.
const (
	maxPromWarnings = 10
	maxWarningBytes = 512
)

// promWarning is one of Prometheus's warnings, the first query that had
// it, and how many queries had it.
type promWarning struct {
	msg, query string
	n          int
}

// promWarning records Prometheus's warning w on query q.
func (f *fetcher) promWarning(w, q string) {
	f.nWarnings++
	if len(w) > maxWarningBytes {
		cut := maxWarningBytes
		for cut > 0 && !utf8.RuneStart(w[cut]) {
			cut--
		}
		w = w[:cut] + "…"
	}
	for i := range f.warnings {
		if f.warnings[i].msg == w {
			f.warnings[i].n++
			return
		}
	}
	if len(f.warnings) < maxPromWarnings {
		f.warnings = append(f.warnings, promWarning{msg: w, query: q, n: 1})
	}
}

// warningLines returns Prometheus's warnings as the report's lines: each
// distinct one once, with its first query and the number of others, and
// one line for those left out.
func (f *fetcher) warningLines() []string {
	var out []string
	listed := 0
	for _, w := range f.warnings {
		more := ""
		if w.n > 1 {
			more = fmt.Sprintf("; and %d more", w.n-1)
		}
		out = append(out, fmt.Sprintf("Prometheus: %s (query: %s%s)", w.msg, w.query, more))
		listed += w.n
	}
	if rest := f.nWarnings - listed; rest > 0 {
		out = append(out, fmt.Sprintf("Prometheus: %d more warning(s) not listed (%d distinct ones are)", rest, maxPromWarnings))
	}
	return out
}

// fetch queries Prometheus for the series the rules read. The fetcher it
// returns holds the queries sent and Prometheus's warnings.
func fetch(ctx context.Context, c Config) (Input, *fetcher, error) {
	f, err := newFetcher(c)
	if err != nil {
		return Input{}, nil, err
	}
	c = f.c
	in := Input{Start: f.r.Start.Add(-c.Step), Step: c.Step, Steps: int(f.r.End.Sub(f.r.Start)/c.Step) + 1}
	q := queries(c)
	sig, err := f.query(ctx, q.signal)
	if err != nil {
		return in, nil, err
	}
	if len(sig) == 0 {
		return in, nil, f.noData(ctx)
	}
	names := instanceNames(sig)
	idx := map[seriesKey]int{}
	for _, key := range sortedKeys(names) {
		idx[key] = len(in.Instances)
		in.Instances = append(in.Instances, InstanceSeries{Name: names[key], Signal: f.values(sig[key])})
	}
	fill := func(query string, set func(*InstanceSeries, []float64)) error {
		m, err := f.query(ctx, query)
		if err != nil {
			return err
		}
		for key, i := range idx {
			if s, ok := m[key]; ok {
				set(&in.Instances[i], f.values(s))
			}
		}
		return nil
	}
	if err := fill(q.noDB95, func(s *InstanceSeries, v []float64) { s.NoDB95 = v }); err != nil {
		return in, nil, err
	}
	if err := fill(q.noDB99, func(s *InstanceSeries, v []float64) { s.NoDB99 = v }); err != nil {
		return in, nil, err
	}
	for sig := HostSignal(0); sig < NumHostSignals; sig++ {
		if err := fill(q.host[sig], func(s *InstanceSeries, v []float64) { s.Host[sig] = v }); err != nil {
			return in, nil, err
		}
	}
	// The stall probe's late wake-ups: rule 1's held steps and the
	// hidden-stall warning.
	if err := fill(q.stalls, func(s *InstanceSeries, v []float64) { s.Stalls = v }); err != nil {
		return in, nil, err
	}
	// The Go runtime's CPU of its collector and of the program: rule 5
	// names GC when the collector's share rose (absent before issue #35).
	if err := fill(q.gcCPU, func(s *InstanceSeries, v []float64) { s.GCCPU = v }); err != nil {
		return in, nil, err
	}
	if err := fill(q.userCPU, func(s *InstanceSeries, v []float64) { s.UserCPU = v }); err != nil {
		return in, nil, err
	}
	var les map[float64]string
	// Observations per step: what each step's percentile rests on (and
	// rule 1's held steps need requests; rule 3 weighs what the DB-call
	// signal does not watch).
	if err := fill(q.requests, func(s *InstanceSeries, v []float64) { s.Requests = v }); err != nil {
		return in, nil, err
	}
	if err := fill(q.calls, func(s *InstanceSeries, v []float64) { s.DBCalls = v }); err != nil {
		return in, nil, err
	}
	for i := range in.Instances {
		s := &in.Instances[i]
		s.Counts = s.DBCalls
		if c.Signal == "request" {
			s.Counts = s.Requests
		}
	}
	if err := fill(q.noDBCount, func(s *InstanceSeries, v []float64) { s.NoDBCount = v }); err != nil {
		return in, nil, err
	}
	in.Buckets, les = f.buckets(ctx, q.bucketMatch)
	// Calls over the threshold (over the first bucket bound at or above
	// it): a step with too few calls for its percentile still counts when
	// that many of them were slow.
	if le, ok := boundAtOrAbove(les, c.Threshold.Seconds()); ok {
		if err := fill(q.overAt(le), func(s *InstanceSeries, v []float64) { s.Over = v }); err != nil {
			return in, nil, err
		}
	}
	in.Quantile = signalQuantile(c.Signal)
	if qs := chooseQuantile(in); qs != in.Quantile {
		// Too few observations per step for the signal's percentile: a
		// lower one, asked again (docs/triage.md, rule 1).
		in.Quantile = qs
		sig, err := f.query(ctx, q.signalAt(qs))
		if err != nil {
			return in, nil, err
		}
		for key, i := range idx {
			if s, ok := sig[key]; ok {
				in.Instances[i].Signal = f.values(s)
			} else {
				in.Instances[i].Signal = f.values(&model.SampleStream{})
			}
		}
	}
	// Rule 3 compares the dependencies at the signal's percentile when it
	// is under the p95, at the p95 otherwise (depQuantile): the DB-call one
	// beside the request signal (the signal itself with the DB signal), and
	// each route's outbound one — each asked once, at that percentile.
	dq := depQuantile(in.Quantile)
	if c.Signal == "request" {
		if err := fill(q.dbCallAt(dq), func(s *InstanceSeries, v []float64) { s.DBCall = v }); err != nil {
			return in, nil, err
		}
	} else {
		for i := range in.Instances {
			in.Instances[i].DBCall = in.Instances[i].Signal
		}
	}
	if err := f.fillOutbound(ctx, q, dq, idx, in.Instances); err != nil {
		return in, nil, err
	}
	return in, f, nil
}

// boundAtOrAbove returns the le label of the smallest bucket bound at or
// above thr (seconds).
func boundAtOrAbove(les map[float64]string, thr float64) (string, bool) {
	best, found := math.Inf(1), false
	for v := range les {
		if v >= thr-1e-9*math.Max(1, thr) && v < best {
			best, found = v, true
		}
	}
	return les[best], found
}

// newFetcher checks c, fills its defaults and makes the client.
func newFetcher(c Config) (*fetcher, error) {
	if c.Step == 0 {
		c.Step = DefaultStep
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.Signal == "" {
		c.Signal = "db"
	}
	switch {
	case c.URL == "":
		return nil, fmt.Errorf("%w: no Prometheus URL", ErrConfig)
	case c.Step < time.Second || c.Step%time.Second != 0:
		return nil, fmt.Errorf("%w: step %v: want whole seconds, at least 1s", ErrConfig, c.Step)
	case c.Step > MaxStep:
		return nil, fmt.Errorf("%w: step %v: at most %v", ErrConfig, c.Step, Dur(MaxStep))
	case c.Start.Before(MinTime):
		return nil, fmt.Errorf("%w: the range starts at %s, before 1970", ErrConfig, c.Start.UTC().Format(time.RFC3339))
	case c.End.After(MaxTime):
		return nil, fmt.Errorf("%w: the range ends at %s, after %d", ErrConfig, c.End.UTC().Format(time.RFC3339), MaxTime.Year())
	case c.Threshold < 0:
		return nil, fmt.Errorf("%w: threshold %v: want a positive duration", ErrConfig, c.Threshold)
	case c.Signal != "db" && c.Signal != "request":
		return nil, fmt.Errorf("%w: signal %q: want db or request", ErrConfig, c.Signal)
	case !c.End.After(c.Start):
		return nil, fmt.Errorf("%w: the range %s to %s is empty", ErrConfig, c.Start.UTC().Format(time.RFC3339), c.End.UTC().Format(time.RFC3339))
	case c.BearerToken != "" && (c.Username != "" || c.Password != ""):
		return nil, fmt.Errorf("%w: a bearer token and basic auth together", ErrConfig)
	}
	// Step i covers [start+i·step, start+(i+1)·step): its value is
	// evaluated at the step's end, over the window [step] before it.
	start := c.Start.Truncate(c.Step)
	end := c.End.Truncate(c.Step) // a step still in progress is left out
	if !end.After(start) {
		return nil, fmt.Errorf("%w: the range %s to %s holds no whole step of %v", ErrConfig, c.Start.UTC().Format(time.RFC3339), c.End.UTC().Format(time.RFC3339), c.Step)
	}
	if n := int64(end.Sub(start) / c.Step); n > MaxSteps {
		return nil, fmt.Errorf("%w: %d steps of %v: at most %d (a larger step or a shorter range)", ErrConfig, n, c.Step, MaxSteps)
	}
	cl, err := NewClient(c)
	if err != nil {
		return nil, err
	}
	return &fetcher{c: c, url: cl.url, api: cl.api, r: promRange{Start: start.Add(c.Step), End: end, Step: c.Step}}, nil
}

// querySet are the PromQL queries of one analysis.
type querySet struct {
	signal, noDB95, noDB99 string
	// dbCallAt is the DB-call q quantile (the signal itself with --signal
	// db); outboundAt and outboundCount the q quantile and the count of
	// the requests' outbound time, per route (and peer, where labelled).
	dbCallAt, outboundAt func(q float64) string
	outboundCount        string
	host                 [NumHostSignals]string
	stalls, requests     string
	// gcCPU and userCPU are the Go runtime's CPU seconds per step of its
	// collector and of the program (rule 5's GC evidence).
	gcCPU, userCPU string
	// calls counts the DB calls per step, noDBCount the requests without
	// DB calls.
	calls, noDBCount string
	bucketMatch      string
	// signalAt is the signal's query at another quantile; overAt counts
	// the observations over the bucket bound le.
	signalAt func(q float64) string
	overAt   func(le string) string
}

// Lookback is how many steps back the previous value of a counter is
// looked for: a gap in the scrapes (a stopped or unreachable instance) of
// up to Lookback−1 steps is charged whole to the first step after it.
const Lookback = 10

// queries builds the PromQL of every rule from c (see docs/triage.md).
func queries(c Config) querySet {
	sel := selector(c.Job, c.Route)
	q := querySet{}
	hq := func(phi string, metric, sel string) string {
		return fmt.Sprintf("histogram_quantile(%s, sum by (job, instance, le) (%s))", phi, stepIncrease(metric+sel, c.Step))
	}
	hist := "latscope_db_call_duration_seconds"
	if c.Signal == "request" {
		hist = "latscope_request_duration_seconds"
	}
	q.signalAt = func(qs float64) string { return hq(strconv.FormatFloat(qs, 'g', -1, 64), hist+"_bucket", sel) }
	q.signal = q.signalAt(signalQuantile(c.Signal))
	q.bucketMatch = hist + "_bucket" + sel
	q.overAt = func(le string) string {
		return fmt.Sprintf("sum by (job, instance) (%s) - sum by (job, instance) (%s)",
			stepIncrease(hist+"_count"+sel, c.Step), stepIncrease(hist+"_bucket"+selector(c.Job, c.Route, "le", le), c.Step))
	}
	noDB := selector(c.Job, c.Route, "db", "no")
	q.noDB95 = hq("0.95", "latscope_request_duration_seconds_bucket", noDB)
	q.noDB99 = hq("0.99", "latscope_request_duration_seconds_bucket", noDB)
	inc := func(metric string, extra ...string) string {
		return fmt.Sprintf("sum by (job, instance) (%s)", stepIncrease(metric+selector(c.Job, "", extra...), c.Step))
	}
	q.host[Throttled] = inc("latscope_cfs_throttled_seconds_total")
	q.host[Stall] = inc("latscope_stall_seconds_total")
	q.host[Steal] = inc("latscope_steal_seconds_total")
	q.host[PSICgroup] = inc("latscope_cpu_pressure_some_seconds_total", "scope", "cgroup")
	q.host[PSIHost] = inc("latscope_cpu_pressure_some_seconds_total", "scope", "host")
	q.stalls = inc("latscope_stalls_total")
	q.gcCPU = inc("latscope_go_gc_cpu_seconds_total")
	q.userCPU = inc("latscope_go_user_cpu_seconds_total")
	q.requests = fmt.Sprintf("sum by (job, instance) (%s)", stepIncrease("latscope_request_duration_seconds_count"+sel, c.Step))
	q.dbCallAt = func(qs float64) string {
		return hq(strconv.FormatFloat(qs, 'g', -1, 64), "latscope_db_call_duration_seconds_bucket", sel)
	}
	q.outboundAt = func(qs float64) string {
		return fmt.Sprintf("histogram_quantile(%s, sum by (job, instance, route, peer, le) (%s))", strconv.FormatFloat(qs, 'g', -1, 64), stepIncrease("latscope_request_outbound_seconds_bucket"+sel, c.Step))
	}
	q.outboundCount = fmt.Sprintf("sum by (job, instance, route, peer) (%s)", stepIncrease("latscope_request_outbound_seconds_count"+sel, c.Step))
	q.calls = fmt.Sprintf("sum by (job, instance) (%s)", stepIncrease("latscope_db_call_duration_seconds_count"+sel, c.Step))
	q.noDBCount = fmt.Sprintf("sum by (job, instance) (%s)", stepIncrease("latscope_request_duration_seconds_count"+noDB, c.Step))
	return q
}

// stepIncrease is the PromQL of a counter's increase in each step: its
// last value in the step minus its last value before the step (up to
// Lookback steps back), not below 0 (a restart). Unlike increase(x[step]),
// it neither extrapolates nor loses what a counter gained during a gap in
// the scrapes: a stopped process's held requests and stall time show in
// the step it resumes in.
func stepIncrease(series string, step time.Duration) string {
	w := model.Duration(step).String()
	return fmt.Sprintf("clamp_min(last_over_time(%s[%s]) - last_over_time(%s[%s] offset %s), 0)",
		series, w, series, model.Duration(Lookback*step).String(), w)
}

// selector returns the label matchers {job="…",route="…",extra…}, leaving
// out the empty ones ("" when there are none).
func selector(job, route string, extra ...string) string {
	var m []string
	if job != "" {
		m = append(m, "job="+strconv.Quote(job))
	}
	if route != "" {
		m = append(m, "route="+strconv.Quote(route))
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m = append(m, extra[i]+"="+strconv.Quote(extra[i+1]))
	}
	if len(m) == 0 {
		return ""
	}
	return "{" + strings.Join(m, ",") + "}"
}

// seriesKey identifies a series by job and instance.
type seriesKey struct{ job, instance string }

// query runs one range query and returns its series by job and instance.
func (f *fetcher) query(ctx context.Context, q string) (map[seriesKey]*model.SampleStream, error) {
	m, err := f.rangeQuery(ctx, q)
	if err != nil {
		return nil, err
	}
	out := map[seriesKey]*model.SampleStream{}
	for _, s := range m {
		out[seriesKey{string(s.Metric["job"]), string(s.Metric["instance"])}] = s
	}
	return out, nil
}

// fillOutbound sets each instance's outbound series: the qs quantile and
// the count per step of its requests' outbound time, one series per route
// and peer (the peer label is empty when the metric has none).
func (f *fetcher) fillOutbound(ctx context.Context, q querySet, qs float64, idx map[seriesKey]int, ins []InstanceSeries) error {
	p95, err := f.queryRoutes(ctx, q.outboundAt(qs))
	if err != nil {
		return err
	}
	counts, err := f.queryRoutes(ctx, q.outboundCount)
	if err != nil {
		return err
	}
	keys := make([]routeKey, 0, len(p95))
	for k := range p95 {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.route != b.route {
			return a.route < b.route
		}
		return a.peer < b.peer
	})
	for _, k := range keys {
		i, ok := idx[k.seriesKey]
		if !ok {
			continue
		}
		o := OutboundSeries{Route: k.route, Peer: k.peer, P: f.values(p95[k])}
		if c, ok := counts[k]; ok {
			o.Count = f.values(c)
		}
		ins[i].Outbound = append(ins[i].Outbound, o)
	}
	return nil
}

// routeKey identifies a series by job, instance, route and peer.
type routeKey struct {
	seriesKey
	route, peer string
}

// queryRoutes runs one range query and returns its series by job,
// instance, route and peer.
func (f *fetcher) queryRoutes(ctx context.Context, q string) (map[routeKey]*model.SampleStream, error) {
	m, err := f.rangeQuery(ctx, q)
	if err != nil {
		return nil, err
	}
	out := map[routeKey]*model.SampleStream{}
	for _, s := range m {
		out[routeKey{seriesKey{string(s.Metric["job"]), string(s.Metric["instance"])}, string(s.Metric["route"]), string(s.Metric["peer"])}] = s
	}
	return out, nil
}

// rangeQuery runs one range query over the fetcher's range, noting the
// query, its warnings, and an error as one line (explain).
func (f *fetcher) rangeQuery(ctx context.Context, q string) (model.Matrix, error) {
	f.queries = append(f.queries, q)
	ctx, cancel := context.WithTimeout(ctx, f.c.Timeout)
	defer cancel()
	m, warnings, err := f.api.queryRange(ctx, q, f.r, f.c.Timeout)
	for _, w := range warnings {
		f.promWarning(w, q)
	}
	if err != nil {
		return nil, f.explain(err, q)
	}
	return m, nil
}

// explain turns a client error into one line saying what went wrong.
func (f *fetcher) explain(err error, q string) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		if tl, ok := errors.AsType[*tooLargeError](err); ok {
			return fmt.Errorf("Prometheus at %s answered over %s (query: %s): %w: a shorter range, a larger step, or --job or --route", f.url, sizeText(tl.max), q, ErrTooLarge)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("Prometheus at %s did not answer within %v (query: %s): %w", f.url, f.c.Timeout, q, err)
		}
		return fmt.Errorf("%w at %s: %w", ErrUnreachable, f.url, err)
	}
	switch {
	case ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden:
		return fmt.Errorf("%w at %s (HTTP %d %s): check the bearer token or the user and password", ErrAuth, f.url, ae.Status, http.StatusText(ae.Status))
	case ae.Status == http.StatusNotFound:
		return fmt.Errorf("%w: %s has no Prometheus query API (HTTP 404 on /api/v1/query_range)", ErrUnreachable, f.url)
	case ae.Type == "bad_data" || ae.Type == "execution":
		return fmt.Errorf("%w: %s (query: %s)", ErrBadQuery, termsafe.String(ae.Msg), q)
	case ae.Type == "timeout":
		return fmt.Errorf("Prometheus at %s did not answer within %v (query: %s): %w", f.url, f.c.Timeout, q, err)
	}
	return fmt.Errorf("Prometheus at %s answered %w (query: %s)", f.url, err, q)
}

// noData explains an empty signal query: no metrics at all for the job,
// or metrics without the signal's histogram.
func (f *fetcher) noData(ctx context.Context) error {
	sel := selector(f.c.Job, "")
	who := "any job"
	if f.c.Job != "" {
		who = "job=" + strconv.Quote(f.c.Job)
	}
	if f.c.Route != "" {
		who += " route=" + strconv.Quote(f.c.Route)
	}
	span := fmt.Sprintf("between %s and %s", f.r.Start.Add(-f.c.Step).UTC().Format(time.RFC3339), f.r.End.UTC().Format(time.RFC3339))
	any, err := f.query(ctx, "sum by (job, instance) (rate(latscope_request_duration_seconds_count"+sel+"["+model.Duration(f.c.Step).String()+"]))")
	if err == nil && len(any) > 0 && f.c.Signal == "db" {
		return fmt.Errorf("%w: no DB calls recorded for %s %s (latscope_db_call_duration_seconds is empty), though requests were: does the app call the database through the agent's driver wrapper? (the request signal needs none)", ErrNoData, who, span)
	}
	return fmt.Errorf("%w for %s %s: is the agent's Metrics option on and scraped?", ErrNoData, who, span)
}

// values lays a series out on the step grid, NaN where it has no point.
// A NaN or ±Inf sample (histogram_quantile's answer for an empty or
// +Inf-only bucket, a division by zero) is no value either: it is neither
// bad nor good, and the writers print it as "-" and null.
func (f *fetcher) values(s *model.SampleStream) []float64 {
	n := int(f.r.End.Sub(f.r.Start)/f.c.Step) + 1
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	for _, p := range s.Values {
		i := int(p.Timestamp.Time().Sub(f.r.Start).Round(f.c.Step) / f.c.Step)
		if v := float64(p.Value); i >= 0 && i < n && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[i] = v
		}
	}
	return out
}

// buckets returns the histogram's finite bucket bounds and their le
// labels, or nil when Prometheus does not say.
func (f *fetcher) buckets(ctx context.Context, match string) ([]float64, map[float64]string) {
	ctx, cancel := context.WithTimeout(ctx, f.c.Timeout)
	defer cancel()
	les, err := f.api.labelValues(ctx, "le", match, f.r.Start.Add(-f.c.Step), f.r.End)
	if err != nil {
		return nil, nil
	}
	var out []float64
	labels := map[float64]string{}
	for _, le := range les {
		if v, err := strconv.ParseFloat(le, 64); err == nil && !math.IsInf(v, 0) {
			out = append(out, v)
			labels[v] = le
		}
	}
	sort.Float64s(out)
	return out, labels
}

// instanceNames names each series by its instance label, or job/instance
// when the series come from several jobs.
func instanceNames(m map[seriesKey]*model.SampleStream) map[seriesKey]string {
	jobs := map[string]bool{}
	for k := range m {
		jobs[k.job] = true
	}
	out := map[seriesKey]string{}
	for k := range m {
		out[k] = k.instance
		if len(jobs) > 1 {
			out[k] = k.job + "/" + k.instance
		}
	}
	return out
}

// sortedKeys returns the keys of names, sorted by name.
func sortedKeys(names map[seriesKey]string) []seriesKey {
	keys := make([]seriesKey, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return names[keys[i]] < names[keys[j]] })
	return keys
}

// authRoundTripper adds the credentials to the requests that go to the
// Prometheus the user named (the same scheme, host and port as
// Config.URL), and to no other: a redirect to another host is followed
// without them. It also caps each answer's body at max bytes.
type authRoundTripper struct {
	base   http.RoundTripper
	c      Config
	origin string // scheme://host:port of Config.URL
	max    int64
}

// RoundTrip sends req, with the credentials when it goes to the named
// Prometheus.
func (a *authRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if httpurl.Origin(req.URL) == a.origin {
		switch {
		case a.c.BearerToken != "":
			req.Header.Set("Authorization", "Bearer "+a.c.BearerToken)
		case a.c.Username != "" || a.c.Password != "":
			req.SetBasicAuth(a.c.Username, a.c.Password)
		}
	} else {
		req.Header.Del("Authorization") // e.g. from userinfo in Config.URL
	}
	resp, err := a.base.RoundTrip(req)
	if err == nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: a.max, max: a.max}
	}
	return resp, err
}

// cappedBody is a response body that fails with ErrTooLarge past its
// cap, instead of being read to its end.
type cappedBody struct {
	io.ReadCloser
	left, max int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &tooLargeError{b.max}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - int(-b.left), &tooLargeError{b.max}
	}
	return n, err
}

// tooLargeError is ErrTooLarge with the cap.
type tooLargeError struct{ max int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%v: over %s", ErrTooLarge, sizeText(e.max))
}
func (e *tooLargeError) Unwrap() error { return ErrTooLarge }

// sizeText formats n bytes in MiB or KiB when it is a whole number of them.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
