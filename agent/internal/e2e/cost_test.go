package e2e

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// The direct cost of the agent and of the runtime tracer, measured inside a
// run instead of as the difference of two runs: TestOverhead profiles the
// service's process during every round and sorts the CPU samples of each
// variant by the code they were taken in. Differences of whole-process CPU
// between rounds swing by several µs per request; a share of samples taken
// in the same rounds does not.

// costKind is where a CPU sample was taken.
type costKind int

const (
	costOther   costKind = iota // the service: net/http, the handler, the kernel, GC
	costAgent                   // package agent's code on the request path or its sampler
	costTaskAPI                 // runtime/trace: tasks, regions, logs, the flight recorder's copying
	costTracer                  // the runtime's tracer: writing events, stacks, generations
	nCostKinds
)

var costNames = [nCostKinds]string{"service", "agent code", "runtime/trace", "runtime tracer"}

// classify says where the sample with these frames (leaf first) was taken:
// the innermost frame that belongs to the tracer, runtime/trace or package
// agent decides. Frames of the wrapped handler (below the agent's
// next.ServeHTTP) are the service's, not the agent's.
func classify(funcs []string) costKind {
	for _, f := range funcs {
		switch {
		case isTracerFunc(f):
			return costTracer
		case strings.HasPrefix(f, "runtime/trace."):
			return costTaskAPI
		case strings.HasPrefix(f, "net/http.(*ServeMux).ServeHTTP"), strings.HasPrefix(f, "net/http.HandlerFunc.ServeHTTP"):
			return costOther // the handler the agent wraps
		case strings.HasPrefix(f, "github.com/latscope/latscope/agent/internal/e2e."):
			return costOther // the measurement's own code: dispatch, the load process's wait
		case strings.HasPrefix(f, "github.com/latscope/latscope/agent."):
			return costAgent
		}
	}
	return costOther
}

// isTracerFunc reports whether f is part of the runtime's execution tracer.
func isTracerFunc(f string) bool {
	for _, p := range []string{"runtime.trace", "runtime.(*trace", "runtime.(trace", "runtime.readTrace", "runtime.ReadTrace"} {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// costSamples counts a variant's CPU samples by costKind.
type costSamples [nCostKinds]int64

// add sorts the samples of a CPU profile.
func (c *costSamples) add(p *profile.Profile) {
	var funcs []string
	for _, s := range p.Sample {
		funcs = funcs[:0]
		for _, loc := range s.Location {
			for _, l := range loc.Line { // inlined frames first, as in the stack
				if l.Function != nil {
					funcs = append(funcs, l.Function.Name)
				}
			}
		}
		c[classify(funcs)] += s.Value[0]
	}
}

func (c *costSamples) total() (n int64) {
	for _, v := range c {
		n += v
	}
	return n
}

// share returns kind's share of the samples and its 95 % Wilson interval.
func (c *costSamples) share(k costKind) (p, lo, hi float64) {
	n := float64(c.total())
	if n == 0 {
		return 0, 0, 0
	}
	p = float64(c[k]) / n
	const z = 1.96
	d := 1 + z*z/n
	mid := (p + z*z/(2*n)) / d
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / d
	return p, mid - half, mid + half
}

// profileHz is the CPU profiler's rate during the rounds. pprof's own 100 Hz
// gives about 100 samples per round at 5,000 requests/s, too few to tell
// 2 µs from 4; setting the rate first is the runtime's documented way to
// raise it (runtime.SetCPUProfileRate). The runtime then prints "cannot set
// cpu profile rate" when pprof tries to set 100 Hz, and the profile's period
// says 10 ms; the shares below count samples, so neither changes them.
// Linux's CPU-time timers fire on the kernel's tick: with CONFIG_HZ=250
// (this machine) a higher rate still gives 250 samples per CPU second.
const profileHz = 250

// profiled runs f under the CPU profiler and adds its samples to c.
func profiled(t *testing.T, c *costSamples, f func()) {
	t.Helper()
	var buf bytes.Buffer
	runtime.SetCPUProfileRate(profileHz)
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatalf("CPU profile: %v", err)
	}
	f()
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("CPU profile: %v", err)
	}
	c.add(p)
}

// reportCost logs each variant's direct costs per request: the share of its
// samples times its CPU per request (µs), with the interval of the share.
func reportCost(t *testing.T, name string, cost []costSamples, cpuPerRequest []float64) {
	t.Logf("%s, direct cost from the CPU profile of the same rounds, µs per request [95 %% interval of the sample share]:", name)
	for i, v := range variants {
		var b strings.Builder
		fmt.Fprintf(&b, "  %-16s %6d samples", v.name, cost[i].total())
		for k := costAgent; k < nCostKinds; k++ {
			p, lo, hi := cost[i].share(k)
			c := cpuPerRequest[i]
			fmt.Fprintf(&b, "   %s %.2f [%.2f, %.2f]", costNames[k], p*c, lo*c, hi*c)
		}
		t.Log(b.String())
	}
}
