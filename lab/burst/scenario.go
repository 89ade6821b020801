package burst

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/sched"
	"github.com/latscope/latscope/lab"
)

func init() {
	lab.Register(lab.Scenario{
		Name:    "burst",
		Summary: "batches fanned out to goroutines wake the scheduler; a small steady pool cuts CPU per event",
		Run:     Run,
	})
}

// Variant is one configuration the scenario measures.
type Variant struct {
	Name string `json:"name"`
	Mode Mode   `json:"mode"`
	// Procs is GOMAXPROCS; 0 means what fits the CPUs the lab may use
	// (hostsig.GOMAXPROCSFor of the tightest quota).
	Procs int `json:"procs"`
}

// Options configure the scenario. Zero fields take DefaultOptions' values.
type Options struct {
	Service  Config    // batch, interval, work per event (Mode and Procs come from each Variant)
	Variants []Variant // run in order; "spawn" and "fixed" are required for the checks
	Hz       int       // CPU profiling rate
	// ProfileWindow and TraceWindow are the lengths of the CPU profile and
	// the trace; 0 derives them from the lab profile's window.
	ProfileWindow, TraceWindow time.Duration
}

// DefaultOptions: GOMAXPROCS 32, as in the scheduler case (docs/method.md
// §10), for the bursty variants and the fix, and one more that only lowers
// GOMAXPROCS to fit the machine.
var DefaultOptions = Options{
	Service: DefaultConfig,
	Variants: []Variant{
		{Name: "spawn", Mode: Spawn, Procs: 32},
		{Name: "pool", Mode: Pool, Procs: 32},
		{Name: "fixed", Mode: Fixed, Procs: 32},
		{Name: "spawn-fit", Mode: Spawn},
	},
	Hz: DefaultHz,
}

func (o Options) withDefaults(p lab.Profile) Options {
	d := DefaultOptions
	o.Service = o.Service.withDefaults()
	if len(o.Variants) == 0 {
		o.Variants = d.Variants
	}
	if o.Hz <= 0 {
		o.Hz = d.Hz
	}
	if o.ProfileWindow <= 0 {
		o.ProfileWindow = min(max(p.Window, time.Second), 5*time.Second)
	}
	if o.TraceWindow <= 0 {
		o.TraceWindow = min(max(p.Window/2, 2*time.Second), 3*time.Second)
	}
	return o
}

// Run runs the scenario with DefaultOptions.
func Run(ctx context.Context, env *lab.Env) (*lab.Outcome, error) {
	return RunOptions(ctx, env, DefaultOptions)
}

// RunOptions runs every variant in its own burst-serve process, then
// predicts and checks.
func RunOptions(ctx context.Context, env *lab.Env, o Options) (*lab.Outcome, error) {
	o = o.withDefaults(env.Profile)
	res := &Result{Options: o, Profile: env.Profile, NumCPU: runtime.NumCPU(), HZ: userHZ()}
	if l, err := hostsig.ReadLimit(os.Getpid()); err == nil {
		res.Limit = &l
		res.Fit = hostsig.GOMAXPROCSFor(l.Quota, res.NumCPU)
	} else {
		res.Fit = res.NumCPU
		env.Logf("burst: cpu limit unknown (%v): fitting GOMAXPROCS to %d CPUs", err, res.NumCPU)
	}
	for i, v := range o.Variants {
		env.Step(float64(i)/float64(len(o.Variants)), "burst "+v.Name)
		m, err := runVariant(ctx, env, o, v, res.Fit)
		if err != nil {
			return nil, fmt.Errorf("burst %s: %w", v.Name, err)
		}
		env.Logf("burst %s: %.0f events/s, %.2f µs CPU per event, scheduler %.0f %% of CPU (profile)",
			v.Name, m.EventsPerSec, m.CPUPerEvent/1e3, 100*m.Profile.CPU.Share(sched.ClassScheduler))
		res.Variants = append(res.Variants, m)
	}
	env.Step(1, "burst done")
	res.predict()
	return &lab.Outcome{
		Title:    "Runtime overhead that hides in the scheduler",
		Markdown: res.markdown(),
		JSON:     res,
		Checks:   res.checks(),
	}, nil
}

func userHZ() int {
	hz, _ := hostsig.UserHZ()
	return hz
}

// runVariant starts one burst-serve process, warms it up, measures CPU per
// event, then takes a CPU profile and a trace, and stops it.
func runVariant(ctx context.Context, env *lab.Env, o Options, v Variant, fit int) (*Measurement, error) {
	cfg := ServeConfig{Config: o.Service, Addr: "127.0.0.1:0", AddrFile: filepath.Join(env.Out, "burst-"+v.Name+".addr")}
	cfg.Mode, cfg.Procs = v.Mode, v.Procs
	if cfg.Procs <= 0 {
		cfg.Procs = fit
	}
	m := &Measurement{Variant: v, Files: Files{
		Log: "burst-" + v.Name + ".log", Profile: "burst-" + v.Name + ".pprof", Trace: "burst-" + v.Name + ".trace",
	}}
	c, err := startChild(ctx, env.Command, cfg, filepath.Join(env.Out, m.Files.Log))
	if err != nil {
		return nil, err
	}
	err = m.measure(ctx, env, o, c)
	if serr := c.stop(); err == nil && serr != nil {
		err = fmt.Errorf("stop burst-serve: %w", serr)
	}
	return m, err
}

func (m *Measurement) measure(ctx context.Context, env *lab.Env, o Options, c *child) error {
	lab.Sleep(ctx, env.Profile.Warmup)
	for range max(env.Profile.Runs, 1) {
		w, err := measureWindow(ctx, c, env.Profile.Window)
		if err != nil {
			return err
		}
		m.Windows = append(m.Windows, w)
	}
	st, err := c.stats(ctx)
	if err != nil {
		return err
	}
	m.GOMAXPROCS, m.Workers = st.GOMAXPROCS, st.Workers
	m.summarise()
	h := host(c, st)
	if m.Profile, m.ProfileWindow, err = c.profile(ctx, o.ProfileWindow, o.Hz, filepath.Join(env.Out, m.Files.Profile), h); err != nil {
		return err
	}
	if m.ProfileWindow.CPU > 0 && m.Profile.CPU.Unit == "ns" {
		m.Coverage = float64(m.Profile.CPU.Total) / float64(m.ProfileWindow.CPU)
	}
	m.Trace, err = c.trace(ctx, o.TraceWindow, o.Hz, filepath.Join(env.Out, m.Files.Trace), h)
	return err
}
