package queueing

import (
	"errors"
	"math"
	"testing"
)

// w workers in front of a pure delay D are a w-server queue of service
// time D: the flow-equivalent solution must equal that queue's exact
// product-form solution, closed, and Erlang C's M/M/w, open.
func TestWorkersAroundADelayAreAMultiServerQueue(t *testing.T) {
	for _, c := range []struct {
		n, w int
		d, z float64
	}{{40, 32, 0.05, 0.001}, {10, 3, 0.02, 0.05}, {200, 16, 0.01, 0.1}, {5, 1, 0.01, 0}} {
		ws, err := SolveWorkers(Network{Stations: []Station{{Name: "inside", Kind: Delay, Demand: c.d}}, Think: c.z}, c.n, c.w)
		if err != nil {
			t.Fatal(err)
		}
		x, r := productForm(c.n, c.z, c.d, c.w)
		if !relNear(ws.Throughput, x, 1e-9) || !relNear(ws.Response+ws.QueueWait, r, 1e-9) {
			t.Errorf("%+v: workers X %.9g R %.9g+%.9g, multi-server X %.9g R %.9g", c, ws.Throughput, ws.Response, ws.QueueWait, x, r)
		}
		if !relNear(ws.Response, c.d, 1e-9) {
			t.Errorf("%+v: time inside %.6g, want the delay %.6g", c, ws.Response, c.d)
		}
	}
	for _, c := range []struct {
		w         int
		d, lambda float64
	}{{32, 0.05, 600}, {4, 0.01, 350}, {1, 0.01, 50}} {
		ws, err := SolveOpenWorkers(Network{Stations: []Station{{Name: "inside", Kind: Delay, Demand: c.d}}}, c.lambda, c.w)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := OpenMMc(c.lambda, c.d, c.w)
		if err != nil {
			t.Fatal(err)
		}
		if !relNear(ws.QueueWait, ref.Wait, 1e-9) || !relNear(ws.Response, c.d, 1e-9) || !relNear(ws.Busy, ref.Util, 1e-9) {
			t.Errorf("%+v: queue %.6g inside %.6g busy %.4g, M/M/c wait %.6g util %.4g", c, ws.QueueWait, ws.Response, ws.Busy, ref.Wait, ref.Util)
		}
	}
}

// A single-server station serves at one rate whatever its population, so
// capping the population inside changes no throughput: the time inside
// plus the queue for a worker is MVA's response.
func TestWorkersBeforeASingleServer(t *testing.T) {
	net := Network{Stations: []Station{{Name: "lock", Kind: Queueing, Servers: 1, Demand: 0.002}}, Think: 0.005}
	ref, _ := MVA(net, 60)
	ws, err := SolveWorkers(net, 60, 8)
	if err != nil {
		t.Fatal(err)
	}
	if !relNear(ws.Throughput, ref.Throughput, 1e-9) || !relNear(ws.Response+ws.QueueWait, ref.Response, 1e-9) {
		t.Errorf("throughput %.6g, without workers %.6g", ws.Throughput, ref.Throughput)
	}
	if ws.QueueWait <= 0 || ws.Response >= ref.Response {
		t.Errorf("inside %.6g queue %.6g: want part of MVA's %.6g outside", ws.Response, ws.QueueWait, ref.Response)
	}
	if !relNear(ws.Busy, 1, 1e-2) {
		t.Errorf("busy %.4g at 60 clients on 8 workers", ws.Busy)
	}
	var sum float64
	for _, r := range ws.Residence {
		sum += r
	}
	if !relNear(sum, ws.Response, 1e-12) {
		t.Errorf("residences sum to %.6g, response %.6g", sum, ws.Response)
	}
}

func TestWorkersNotBinding(t *testing.T) {
	net := Network{Stations: []Station{{Name: "cpu", Kind: Queueing, Servers: 2, Demand: 0.002}, {Name: "up", Kind: Delay, Demand: 0.01}}, Think: 0.005}
	ref, _ := MVA(net, 8)
	ws, err := SolveWorkers(net, 8, 32)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Throughput != ref.Throughput || ws.Response != ref.Response || ws.QueueWait != 0 {
		t.Errorf("8 clients on 32 workers: %+v, want MVA's %+v", ws, ref)
	}
}

func TestOpenWorkersUnstable(t *testing.T) {
	_, err := SolveOpenWorkers(Network{Stations: []Station{{Name: "inside", Kind: Delay, Demand: 0.01}}}, 400, 4)
	var u *UnstableError
	if !errors.As(err, &u) || u.Servers != 4 {
		t.Fatalf("400/s on 4 workers of 10 ms: %v", err)
	}
	if _, err := SolveWorkers(Network{}, 10, 0); err == nil {
		t.Error("0 workers accepted")
	}
}

func relNear(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

// productForm is the exact solution of n clients thinking z in front of
// one c-server queue of service time d: P(j) ∝ z^(n−j)/(n−j)! ·
// d^j/Π min(i, c), throughput and response time.
func productForm(n int, z, d float64, c int) (x, r float64) {
	lw := make([]float64, n+1)
	top := math.Inf(-1)
	var prod float64
	for j := 0; j <= n; j++ {
		if j > 0 {
			prod += math.Log(d) - math.Log(float64(min(j, c)))
		}
		lg, _ := math.Lgamma(float64(n-j) + 1)
		lw[j] = float64(n-j)*math.Log(max(z, 1e-300)) - lg + prod
		top = max(top, lw[j])
	}
	var s, l float64
	for j := range lw {
		lw[j] = math.Exp(lw[j] - top)
		s += lw[j]
	}
	for j := 1; j <= n; j++ {
		x += lw[j] / s * float64(min(j, c)) / d
		l += float64(j) * lw[j] / s
	}
	return x, l / x
}
