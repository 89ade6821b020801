package triagereport

import (
	"time"

	"github.com/latscope/latscope/internal/triage"
)

// synth describes a synthetic fleet, as package triage's tests build it:
// bad(inst, step) says which steps are slow, noDBRises whether the
// requests without DB calls slow with them, noNoDB that they have no
// series.
type synth struct {
	instances int
	steps     int
	bad       func(inst, step int) bool
	noDBRises bool
	noNoDB    bool
}

var t0 = time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)

// input is the fleet's series: a signal of 4 ms, 90 ms in the bad steps,
// and the host signals at zero.
func (s synth) input() triage.Input {
	in := triage.Input{Start: t0, Step: time.Minute, Steps: s.steps}
	for k := range s.instances {
		is := triage.InstanceSeries{Name: string(rune('a' + k))}
		for sig := triage.HostSignal(0); sig < triage.NumHostSignals; sig++ {
			is.Host[sig] = make([]float64, s.steps)
		}
		if !s.noNoDB {
			is.NoDB95, is.NoDB99 = make([]float64, s.steps), make([]float64, s.steps)
		}
		is.Signal = make([]float64, s.steps)
		for i := range s.steps {
			bad := s.bad(k, i)
			is.Signal[i] = 0.004
			if bad {
				is.Signal[i] = 0.09
			}
			if !s.noNoDB {
				is.NoDB95[i], is.NoDB99[i] = 0.002, 0.0025
				if bad && s.noDBRises {
					is.NoDB95[i], is.NoDB99[i] = 0.03, 0.08
				}
			}
		}
		in.Instances = append(in.Instances, is)
	}
	return in
}

// withOutbound adds one route's outbound series per instance: a p95 of
// 5 ms, rise seconds more in the bad steps, 100 calls a step.
func withOutbound(in triage.Input, s synth, route string, rise float64) triage.Input {
	for k := range in.Instances {
		o := triage.OutboundSeries{Route: route, P: make([]float64, in.Steps), Count: make([]float64, in.Steps)}
		for i := range in.Steps {
			o.P[i], o.Count[i] = 0.005, 100
			if s.bad(k, i) {
				o.P[i] += rise
			}
		}
		in.Instances[k].Outbound = append(in.Instances[k].Outbound, o)
	}
	return in
}
