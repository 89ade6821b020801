package jfr

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/latscope/latscope/internal/churn"
	"github.com/latscope/latscope/internal/stats"
)

// ChurnEvents are the event types the churn analysis reads beside Events:
// the native samples (counted, never CPU) and thread starts and ends.
// jdk.ExecutionSample, jdk.ThreadPark, jdk.ActiveSetting, jdk.CPUInformation
// and jdk.CPULoad are in Events already.
var ChurnEvents = []string{"jdk.NativeMethodSample", "jdk.ThreadStart", "jdk.ThreadEnd"}

// churnRead are the event types AnalyzeChurn reads.
var churnRead = append([]string{"jdk.ExecutionSample", "jdk.ThreadPark", "jdk.ActiveSetting", "jdk.CPUInformation", "jdk.CPULoad"}, ChurnEvents...)

// AnalyzeChurn reads the recording at path (whose headers are rec) for the
// churn analysis alone: for a recording with no request to budget (no
// latscope.Request events, no handler), whose pools are the question.
// o.Recording is set to rec.
func AnalyzeChurn(ctx context.Context, path string, rec *Recording, o ChurnOptions) (*ChurnReport, error) {
	o.Recording = rec
	c := NewChurn(o)
	err := ReadEvents(ctx, path, PrintOptions{StackDepth: DefaultStackDepth, Events: churnRead}, func(ev *Event) error {
		c.Event(ev)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c.Result(), nil
}

// ChurnOptions configure a churn analysis. A zero field takes
// DefaultChurnOptions' value.
type ChurnOptions struct {
	Frames *ChurnFrames // the frame table
	Rules  *Rules       // decide the application frames that pay for machinery
	// Thresholds are both runtimes' (churn.DefaultThresholds, as
	// sched.DefaultThresholds): SchedShare and MinSamples judge the share,
	// BurstGap and MinBurst cluster the wakeups of idle workers.
	Thresholds churn.Thresholds
	// Recording resolves the event types of jdk.ActiveSetting events (the
	// sampling period, the park threshold); nil leaves them unknown.
	Recording *Recording
	Top       int // rows in top-N lists
}

// DefaultChurnOptions are the options of `latscope analyze`.
var DefaultChurnOptions = ChurnOptions{Frames: DefaultChurnFrames, Rules: &DefaultRules, Thresholds: churn.DefaultThresholds, Top: 6}

func (o ChurnOptions) withDefaults() ChurnOptions {
	d := DefaultChurnOptions
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

// maxParkEnds bounds the idle-worker wakeups kept for the burst statistics
// (8 bytes each); past it the bursts describe the first ones only.
const maxParkEnds = 1 << 22

// Churn measures scheduler churn on the JVM, one event at a time: the
// share of the execution samples in ForkJoinPool and thread-pool machinery
// and in park/unpark, the parks of idle pool workers and how they bunch up,
// and thread starts (docs/jfr-churn.md). Feed it every event of Events and
// ChurnEvents; it keeps no event.
type Churn struct {
	opts    ChurnOptions
	samples int64
	groups  [NumChurnGroups]int64
	top     map[string]int64 // deciding frame → machinery samples
	payers  map[string]int64 // application frame → machinery samples
	native  int64
	parks   [NumChurnGroups]int64 // recorded parks by cause
	ends    []int64               // ends of idle-worker parks (ns since the epoch)
	endsCut int64                 // idle-worker parks past maxParkEnds
	starts  int64
	exits   int64
	first   time.Time
	last    time.Time
	period  time.Duration // shortest jdk.ExecutionSample period
	parkTh  string        // shortest jdk.ThreadPark threshold
	parkThD time.Duration
	hw      int
	load    cpuLoad
}

// cpuLoad sums jdk.CPULoad: the JVM's CPU, user and system, as shares of
// all hardware threads, times the interval they cover (ns).
type cpuLoad struct {
	last         time.Time
	user, system float64
	span         float64
}

// NewChurn returns a churn analysis.
func NewChurn(o ChurnOptions) *Churn {
	return &Churn{opts: o.withDefaults(), top: map[string]int64{}, payers: map[string]int64{}, parkThD: -1}
}

// Event adds one event; types the analysis does not read are ignored.
func (c *Churn) Event(ev *Event) {
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

func (c *Churn) seen(t time.Time) {
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

func (c *Churn) sample(stack []Frame) {
	c.samples++
	g, fr := c.opts.Frames.Classify(stack)
	c.groups[g]++
	if !g.Machinery() {
		return
	}
	c.top[fr]++
	c.payers[c.opts.Rules.Decide(stack).App]++
}

func (c *Churn) park(ev *Event) {
	cause := c.opts.Frames.ParkCause(ev.Stack)
	c.parks[cause]++
	if cause != ChurnFJIdle && cause != ChurnExecutor {
		return
	}
	if len(c.ends) >= maxParkEnds {
		c.endsCut++
		return
	}
	c.ends = append(c.ends, ev.Start.Add(ev.Duration).UnixNano())
}

func (c *Churn) setting(ev *Event) {
	rec := c.opts.Recording
	if rec == nil {
		return
	}
	typ, s := rec.TypeName(ev.Setting.TypeID), ev.Setting
	switch {
	case typ == "jdk.ExecutionSample" && s.Name == "period":
		if d, ok := thresholdValue(s.Value); ok && d > 0 && (c.period == 0 || d < c.period) {
			c.period = d
		}
	case typ == "jdk.ThreadPark" && s.Name == "threshold":
		if d, ok := thresholdValue(s.Value); ok && (c.parkThD < 0 || d < c.parkThD) {
			c.parkTh, c.parkThD = s.Value, d
		}
	}
}

func (c *Churn) cpuLoad(ev *Event) {
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

// Result returns the analysis. The Churn may take more events afterwards.
func (c *Churn) Result() *ChurnReport {
	t := c.opts.Thresholds
	r := &ChurnReport{Samples: c.samples, NativeSamples: c.native, Period: c.period, Thresholds: t,
		ThreadStarts: c.starts, ThreadEnds: c.exits, Groups: []ChurnShare{}}
	switch rec := c.opts.Recording; {
	case rec != nil && len(rec.Chunks) > 0:
		r.Duration = rec.End().Sub(rec.Start())
	case !c.first.IsZero():
		r.Duration = c.last.Sub(c.first)
	}
	for g, n := range c.groups {
		if g := ChurnGroup(g); g.Machinery() {
			r.Machinery += n
			if n > 0 {
				r.Groups = append(r.Groups, ChurnShare{Group: g, Samples: n, Share: churn.Ratio(n, c.samples)})
			}
		}
	}
	slices.SortStableFunc(r.Groups, func(a, b ChurnShare) int { return int(b.Samples - a.Samples) })
	r.Share = churn.Ratio(r.Machinery, c.samples)
	r.Low, r.High = stats.Wilson(float64(r.Machinery), float64(c.samples))
	r.Top = topCounts(c.top, c.samples, c.opts.Top)
	r.Payers = topCounts(c.payers, c.samples, c.opts.Top)
	r.Parks = c.parkStats()
	if l := c.load; l.span > 0 && c.hw > 0 {
		r.JVMCPU = &JVMCPU{Seconds: (l.user + l.system) * float64(c.hw) / 1e9,
			System: l.system / max(l.user+l.system, 1e-12), Span: time.Duration(l.span)}
	}
	return r
}

func (c *Churn) parkStats() ParkStats {
	p := ParkStats{Threshold: c.parkTh, Gap: c.opts.Thresholds.BurstGap, MinSize: c.opts.Thresholds.MinBurst, ByCause: []ParkCount{}}
	for g, n := range c.parks {
		p.Total += n
		if n > 0 {
			p.ByCause = append(p.ByCause, ParkCount{Cause: ChurnGroup(g), Count: n})
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
