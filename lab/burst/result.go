package burst

import (
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/lab"
)

// Result is the scenario's JSON.
type Result struct {
	Options     Options        `json:"options"`
	Profile     lab.Profile    `json:"profile"`
	NumCPU      int            `json:"num_cpu"`
	Limit       *hostsig.Limit `json:"limit,omitempty"`
	Fit         int            `json:"fit_gomaxprocs"` // GOMAXPROCS that fits the lab's CPUs
	HZ          int            `json:"user_hz"`        // clock ticks of /proc/PID/stat
	Variants    []*Measurement `json:"variants"`
	Predictions []Prediction   `json:"predictions"`
}

// Files names what a variant left in the output folder.
type Files struct {
	Log     string `json:"log"`
	Profile string `json:"profile"`
	Trace   string `json:"trace"`
}

// Measurement is what one variant measured.
type Measurement struct {
	Variant    Variant  `json:"variant"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	Workers    int      `json:"workers"`
	Windows    []Window `json:"windows"`
	Median     Window   `json:"median"` // the window with the median CPU per event
	// CPUPerEvent is the median window's process CPU per processed event
	// (ns), from /proc/PID/stat.
	CPUPerEvent      float64 `json:"cpu_per_event_ns"`
	EventsPerSec     float64 `json:"events_per_sec"`
	Cores            float64 `json:"cores"`              // CPU / wall
	SwitchesPerEvent float64 `json:"switches_per_event"` // thread timeslices per event
	// ProfileWindow is the independent counter over the CPU profile's
	// window; Coverage is the profile's sampled CPU over it. Below 1, the
	// samples missed CPU (tick-based sampling misses threads that run
	// briefly between sleeps, and the kernel side of their wakeups).
	ProfileWindow Window  `json:"profile_window"`
	Coverage      float64 `json:"profile_coverage"`
	// Profile is the scheduler analysis of the CPU profile, Trace that of
	// the trace with CPU samples.
	Profile *sched.Report `json:"profile"`
	Trace   *sched.Report `json:"trace"`
	Files   Files         `json:"files"`
}

func (m *Measurement) summarise() {
	w := medianWindow(m.Windows)
	m.Median = w
	m.CPUPerEvent = w.CPUPerEvent()
	if w.Wall > 0 {
		m.EventsPerSec = float64(w.Events) / w.Wall.Seconds()
		m.Cores = float64(w.CPU) / float64(w.Wall)
	}
	if w.Events > 0 {
		m.SwitchesPerEvent = float64(w.Timeslices) / float64(w.Events)
	}
}

// fired reports whether a report raised the scheduler-overhead finding.
func fired(r *sched.Report) bool {
	if r == nil {
		return false
	}
	for _, f := range r.Findings() {
		if f.Kind == sched.FindSchedOverhead {
			return true
		}
	}
	return false
}

func (r *Result) variant(name string) *Measurement {
	for _, m := range r.Variants {
		if m.Variant.Name == name {
			return m
		}
	}
	return nil
}

// Prediction is the saving that the scheduler's share predicts for a fix,
// next to the saving measured.
type Prediction struct {
	From, To string
	// Share is the scheduler's share of From's sampled CPU (profile), Margin
	// its 95 % half-width; ToShare is what is left in To.
	Share, Margin, ToShare float64
	// Coverage is the share of From's CPU (independent counter) that the
	// profile sampled. The saving is predicted in [Share × Coverage,
	// Share × Coverage + (1 − Coverage)]: the unsampled CPU may or may not
	// be the scheduler's.
	Coverage                    float64
	PredictedLow, PredictedHigh float64
	// CPU per event (ns): From's, predicted for To as From × (1 − Share),
	// and To's measured.
	FromCPU, PredictedCPU, MeasuredCPU float64
	// Savings as fractions of From's CPU per event.
	PredictedSaving, MeasuredSaving float64
	// Resolution is the counter's uncertainty of the measured saving
	// (fraction of From's CPU per event).
	Resolution float64
}

// predict fills Predictions for the fixes the scenario has.
func (r *Result) predict() {
	for _, p := range [][2]string{{"spawn", "fixed"}, {"pool", "fixed"}} {
		from, to := r.variant(p[0]), r.variant(p[1])
		if from == nil || to == nil || from.CPUPerEvent == 0 {
			continue
		}
		c := &from.Profile.CPU
		pr := Prediction{
			From: p[0], To: p[1], Share: c.Share(sched.ClassScheduler), Margin: c.Margin(sched.ClassScheduler),
			ToShare: to.Profile.CPU.Share(sched.ClassScheduler), FromCPU: from.CPUPerEvent, MeasuredCPU: to.CPUPerEvent,
		}
		pr.PredictedCPU = pr.FromCPU * (1 - pr.Share)
		pr.PredictedSaving = pr.Share
		pr.Coverage = from.Coverage
		if pr.Coverage <= 0 {
			pr.Coverage = 1 // unknown: take the samples as the whole
		}
		cov := min(pr.Coverage, 1)
		pr.PredictedLow = pr.Share * cov
		pr.PredictedHigh = pr.PredictedLow + (1 - cov)
		pr.MeasuredSaving = 1 - pr.MeasuredCPU/pr.FromCPU
		pr.Resolution = (from.Median.Resolution(r.HZ) + to.Median.Resolution(r.HZ)) / pr.FromCPU
		r.Predictions = append(r.Predictions, pr)
	}
}
