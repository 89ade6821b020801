package sched

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/latscope/latscope/internal/churn"
	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/stats"
)

// jvmRead are the event types AnalyzeJVM reads: the JFR reader's
// jfr.ChurnEvents and the ones of jfr.Events the analysis needs.
var jvmRead = append([]string{"jdk.ExecutionSample", "jdk.ThreadPark", "jdk.ActiveSetting", "jdk.CPUInformation", "jdk.CPULoad"}, jfr.ChurnEvents...)

// AnalyzeJVM reads the recording at path (whose headers are rec) for the
// JVM's churn analysis alone: for a recording with no request to budget (no
// latscope.Request events, no handler), whose pools are the question.
// o.Recording is set to rec.
func AnalyzeJVM(ctx context.Context, path string, rec *jfr.Recording, o JVMOptions) (*JVMReport, error) {
	o.Recording = rec
	c := NewJVMChurn(o)
	err := jfr.ReadEvents(ctx, path, jfr.PrintOptions{StackDepth: jfr.DefaultStackDepth, Events: jvmRead}, func(ev *jfr.Event) error {
		c.Event(ev)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c.Result(), nil
}

// JVMOptions configure the JVM's churn analysis. A zero field takes
// DefaultJVMOptions' value.
type JVMOptions struct {
	Frames *JVMFrames // the frame table
	Rules  *jfr.Rules // decide the application frames that pay for machinery
	// Thresholds are both runtimes' (churn.DefaultThresholds, as
	// DefaultThresholds for a Go trace): SchedShare and MinSamples judge the share,
	// BurstGap and MinBurst cluster the wakeups of idle workers.
	Thresholds churn.Thresholds
	// Recording resolves the event types of jdk.ActiveSetting events (the
	// sampling period, the park threshold); nil leaves them unknown.
	Recording *jfr.Recording
	Top       int // rows in top-N lists
}

// DefaultJVMOptions are the options of `latscope analyze`.
var DefaultJVMOptions = JVMOptions{Frames: DefaultJVMFrames, Rules: &jfr.DefaultRules, Thresholds: churn.DefaultThresholds, Top: 6}

func (o JVMOptions) withDefaults() JVMOptions {
	d := DefaultJVMOptions
	if o.Frames == nil {
		o.Frames = d.Frames
	}
	if o.Rules == nil {
		o.Rules = d.Rules
	}
	if o.Top <= 0 {
		o.Top = d.Top
	}
	o.Thresholds = o.Thresholds.Or(d.Thresholds)
	return o
}

// maxJVMParkEnds bounds the idle-worker wakeups kept for the burst statistics
// (8 bytes each); past it the bursts describe the first ones only.
const maxJVMParkEnds = 1 << 22

// JVMChurn measures scheduler churn on the JVM, one event at a time: the
// share of the execution samples in ForkJoinPool and thread-pool machinery
// and in park/unpark, the parks of idle pool workers and how they bunch up,
// and thread starts (docs/jfr-churn.md). It is the JVM's counterpart of
// Analyzer, on the rule, interval and words package churn holds for both.
// Feed it every event of a read of jfr.Events (which holds
// jfr.ChurnEvents), the read that feeds the budget's jvm.Analyzer too; it
// keeps no event.
type JVMChurn struct {
	opts    JVMOptions
	samples int64
	groups  [NumJVMGroups]int64
	top     map[string]int64 // deciding frame → machinery samples
	payers  map[string]int64 // application frame → machinery samples
	native  int64
	parks   [NumJVMGroups]int64 // recorded parks by cause
	ends    []int64             // ends of idle-worker parks (ns since the epoch)
	endsCut int64               // idle-worker parks past maxJVMParkEnds
	starts  int64
	exits   int64
	first   time.Time
	last    time.Time
	period  time.Duration // shortest jdk.ExecutionSample period
	parkTh  string        // shortest jdk.ThreadPark threshold
	parkThD time.Duration
	hw      int
	load    jvmCPULoad
}

// jvmCPULoad sums jdk.CPULoad: the JVM's CPU, user and system, as shares of
// all hardware threads, times the interval they cover (ns).
type jvmCPULoad struct {
	last         time.Time
	user, system float64
	span         float64
}

// NewJVMChurn returns the JVM's churn analysis with options o.
func NewJVMChurn(o JVMOptions) *JVMChurn {
	return &JVMChurn{opts: o.withDefaults(), top: map[string]int64{}, payers: map[string]int64{}, parkThD: -1}
}

// Event adds one event; types the analysis does not read are ignored.
func (c *JVMChurn) Event(ev *jfr.Event) {
	switch ev.Type {
	case "jdk.ExecutionSample":
		c.seen(ev.Start)
		c.sample(ev.Stack)
	case "jdk.NativeMethodSample":
		c.seen(ev.Start)
		c.native++
	case "jdk.ThreadPark":
		c.seen(ev.Start)
		c.park(ev)
	case "jdk.ThreadStart":
		c.seen(ev.Start)
		c.starts++
	case "jdk.ThreadEnd":
		c.seen(ev.Start)
		c.exits++
	case "jdk.ActiveSetting":
		c.setting(ev)
	case "jdk.CPUInformation":
		c.hw = max(c.hw, ev.HWThreads)
	case "jdk.CPULoad":
		c.cpuLoad(ev)
	}
}

func (c *JVMChurn) seen(t time.Time) {
	if t.IsZero() {
		return
	}
	if c.first.IsZero() || t.Before(c.first) {
		c.first = t
	}
	if t.After(c.last) {
		c.last = t
	}
}

func (c *JVMChurn) sample(stack []jfr.Frame) {
	c.samples++
	g, fr := c.opts.Frames.Classify(stack)
	c.groups[g]++
	if !g.Machinery() {
		return
	}
	c.top[fr]++
	c.payers[c.opts.Rules.Decide(stack).App]++
}

func (c *JVMChurn) park(ev *jfr.Event) {
	cause := c.opts.Frames.ParkCause(ev.Stack)
	c.parks[cause]++
	if cause != JVMFJIdle && cause != JVMExecutor {
		return
	}
	if len(c.ends) >= maxJVMParkEnds {
		c.endsCut++
		return
	}
	c.ends = append(c.ends, ev.Start.Add(ev.Duration).UnixNano())
}

func (c *JVMChurn) setting(ev *jfr.Event) {
	rec := c.opts.Recording
	if rec == nil {
		return
	}
	typ, s := rec.TypeName(ev.Setting.TypeID), ev.Setting
	switch {
	case typ == "jdk.ExecutionSample" && s.Name == "period":
		if d, ok := jfr.SettingDuration(s.Value); ok && d > 0 && (c.period == 0 || d < c.period) {
			c.period = d
		}
	case typ == "jdk.ThreadPark" && s.Name == "threshold":
		if d, ok := jfr.SettingDuration(s.Value); ok && (c.parkThD < 0 || d < c.parkThD) {
			c.parkTh, c.parkThD = s.Value, d
		}
	}
}

func (c *JVMChurn) cpuLoad(ev *jfr.Event) {
	l := &c.load
	from := l.last
	if from.IsZero() && c.opts.Recording != nil && len(c.opts.Recording.Chunks) > 0 {
		from = c.opts.Recording.Start()
	}
	if d := float64(ev.Start.Sub(from)); !from.IsZero() && d > 0 {
		l.user += ev.Load.JVMUser * d
		l.system += ev.Load.JVMSystem * d
		l.span += d
	}
	l.last = ev.Start
}

// Result returns the analysis. The JVMChurn may take more events afterwards.
func (c *JVMChurn) Result() *JVMReport {
	t := c.opts.Thresholds
	r := &JVMReport{Samples: c.samples, NativeSamples: c.native, Period: c.period, Thresholds: t,
		ThreadStarts: c.starts, ThreadEnds: c.exits, Groups: []JVMShare{}}
	switch rec := c.opts.Recording; {
	case rec != nil && len(rec.Chunks) > 0:
		r.Duration = rec.End().Sub(rec.Start())
	case !c.first.IsZero():
		r.Duration = c.last.Sub(c.first)
	}
	for g, n := range c.groups {
		if g := JVMGroup(g); g.Machinery() {
			r.Machinery += n
			if n > 0 {
				r.Groups = append(r.Groups, JVMShare{Group: g, Samples: n, Share: churn.Ratio(n, c.samples)})
			}
		}
	}
	slices.SortStableFunc(r.Groups, func(a, b JVMShare) int { return int(b.Samples - a.Samples) })
	r.Share = churn.Ratio(r.Machinery, c.samples)
	r.Low, r.High = stats.Wilson(float64(r.Machinery), float64(c.samples))
	r.Top = jvmTopCounts(c.top, c.samples, c.opts.Top)
	r.Payers = jvmTopCounts(c.payers, c.samples, c.opts.Top)
	r.Parks = c.parkStats()
	if l := c.load; l.span > 0 && c.hw > 0 {
		r.JVMCPU = &JVMCPU{Seconds: (l.user + l.system) * float64(c.hw) / 1e9,
			System: l.system / max(l.user+l.system, 1e-12), Span: time.Duration(l.span)}
	}
	return r
}

func (c *JVMChurn) parkStats() ParkStats {
	p := ParkStats{Threshold: c.parkTh, Gap: c.opts.Thresholds.BurstGap, MinSize: c.opts.Thresholds.MinBurst, ByCause: []ParkCount{}}
	for g, n := range c.parks {
		p.Total += n
		if n > 0 {
			p.ByCause = append(p.ByCause, ParkCount{Cause: JVMGroup(g), Count: n})
		}
	}
	slices.SortStableFunc(p.ByCause, func(a, b ParkCount) int { return int(b.Count - a.Count) })
	p.IdleWakeups = int64(len(c.ends)) + c.endsCut
	ends := slices.Clone(c.ends)
	slices.Sort(ends)
	cl := churn.NewClusters(p.Gap)
	for _, e := range ends {
		cl.Add(e)
	}
	cl.Close()
	p.Bursts, p.Max = cl.Count(), cl.Max()
	p.Large, p.InLarge = cl.Large(p.MinSize)
	p.LargeMedian = cl.UpperMedian(p.MinSize)
	return p
}
