package queueing

import (
	"errors"
	"math"
	"testing"
)

// jain342 is the timesharing system of R. Jain, The Art of Computer Systems
// Performance Analysis (Wiley, 1991), Example 34.2: think time 4 s; CPU 16
// visits × 0.125 s, disk A 10 × 0.3 s, disk B 5 × 0.2 s. Table 34.1 lists
// the MVA solution for N = 1..20.
var jain342 = Network{Think: 4, Stations: []Station{
	{Name: "CPU", Servers: 1, Demand: 2},
	{Name: "disk A", Servers: 1, Demand: 3},
	{Name: "disk B", Servers: 1, Demand: 1},
}}

func TestMVAJain342(t *testing.T) {
	// Table 34.1: N, system response time, throughput, queue lengths (CPU, A, B).
	tests := []struct {
		n      int
		r, x   float64
		qc, qa float64
		qb     float64
		tolR   float64
	}{
		{1, 6.000, 0.100, 0.200, 0.300, 0.100, 0.0005},
		{2, 7.400, 0.175, 0.421, 0.684, 0.193, 0.0005},
		{3, 9.088, 0.229, 0.651, 1.158, 0.273, 0.0005},
		{4, 11.051, 0.266, 0.878, 1.721, 0.338, 0.0005},
		{5, 13.256, 0.290, 1.088, 2.365, 0.388, 0.0005},
		{17, 47.045, 0.333, 1.974, 13.195, 0.499, 0.0005},
		{20, 56.016, 0.333, 1.991, 16.177, 0.500, 0.0005},
	}
	for _, tt := range tests {
		sol, err := MVA(jain342, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "R", tt.n, sol.Response, tt.r, tt.tolR)
		near(t, "X", tt.n, sol.Throughput, tt.x, 0.0005)
		near(t, "Q cpu", tt.n, sol.Queue[0], tt.qc, 0.0006)
		near(t, "Q A", tt.n, sol.Queue[1], tt.qa, 0.0006)
		near(t, "Q B", tt.n, sol.Queue[2], tt.qb, 0.0006)
	}
}

func near(t *testing.T, what string, n int, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("N=%d %s = %.4f, want %.4f", n, what, got, want)
	}
}

// birthDeath is the exact solution of a closed network of one c-server
// station (demand d) and think time z, computed independently of MVA from
// the finite-source M/M/c//N birth–death chain (Gross and Harris,
// Fundamentals of Queueing Theory, §2.7): λ_j = (N−j)/z, μ_j = min(j,c)/d.
func birthDeath(n, c int, d, z float64) (x, r float64) {
	p := make([]float64, n+1)
	p[0] = 1
	sum := 1.0
	for j := 1; j <= n; j++ {
		p[j] = p[j-1] * (float64(n-j+1) / z) / (float64(min(j, c)) / d)
		sum += p[j]
	}
	var L float64
	for j := range p {
		p[j] /= sum
		x += p[j] * float64(min(j, c)) / d
		L += float64(j) * p[j]
	}
	return x, L / x
}

func TestMVAMultiServerExact(t *testing.T) {
	tests := []struct {
		n, c int
		d, z float64
	}{
		{1, 3, 0.05, 0.1},
		{5, 3, 0.05, 0.1},
		{10, 10, 0.05, 0.1},
		{20, 10, 0.05, 0.1}, // the seed lab's pool: 20 clients, 10 connections
		{40, 6, 0.047, 0.07},
		{200, 8, 0.01, 0.02},
		{5, 1000000, 0.05, 0.1}, // more servers than clients: no queue, no N×c work
	}
	for _, tt := range tests {
		net := Network{Think: tt.z, Stations: []Station{{Name: "pool", Servers: tt.c, Demand: tt.d}}}
		sol, err := MVA(net, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		x, r := birthDeath(tt.n, tt.c, tt.d, tt.z)
		near(t, "X", tt.n, sol.Throughput, x, 1e-9)
		near(t, "R", tt.n, sol.Response, r, 1e-9)
	}
}

func TestApproximate(t *testing.T) {
	// Schweitzer–Bard against exact MVA: Jain reports the approximation
	// within a few per cent on Example 34.2 (Table 34.3).
	for _, n := range []int{1, 5, 20, 100} {
		ex, _ := MVA(jain342, n)
		ap, err := Approximate(jain342, n)
		if err != nil {
			t.Fatal(err)
		}
		if e := math.Abs(ap.Response-ex.Response) / ex.Response; e > 0.08 {
			t.Errorf("N=%d: approximate R %.3f vs exact %.3f (%.1f%%)", n, ap.Response, ex.Response, 100*e)
		}
	}
	// Seidmann for a multi-server station: bounded error against the exact chain.
	net := Network{Think: 0.1, Stations: []Station{{Servers: 10, Demand: 0.05}}}
	for _, n := range []int{5, 20, 60} {
		ap, _ := Approximate(net, n)
		x, _ := birthDeath(n, 10, 0.05, 0.1)
		if e := math.Abs(ap.Throughput-x) / x; e > 0.1 {
			t.Errorf("N=%d multi-server: approximate X %.2f vs exact %.2f", n, ap.Throughput, x)
		}
	}
}

func TestErlangC(t *testing.T) {
	tests := []struct {
		c    int
		a, p float64
	}{
		{1, 0.5, 0.5},   // M/M/1: P(wait) = ρ
		{2, 1, 1.0 / 3}, // Kleinrock, Queueing Systems vol. 1, M/M/2 at ρ = 0.5
		{3, 2, 4.0 / 9}, // (a^c/c!)(c/(c−a)) / (Σ a^k/k! + that) = (4/3·3)/(1+2+2+4) = 4/9
		{10, 12, 1},     // unstable
	}
	for _, tt := range tests {
		if got := ErlangC(tt.c, tt.a); math.Abs(got-tt.p) > 1e-12 {
			t.Errorf("ErlangC(%d, %v) = %v, want %v", tt.c, tt.a, got, tt.p)
		}
	}
	m, err := OpenMMc(1, 1, 2)
	if err != nil || math.Abs(m.Wait-1.0/3) > 1e-12 || math.Abs(m.Response-4.0/3) > 1e-12 {
		t.Errorf("M/M/2 λ=1 S=1: %+v, %v; want Wq 1/3, R 4/3", m, err)
	}
	if _, err := OpenMMc(3, 1, 2); err == nil {
		t.Error("unstable M/M/2 accepted")
	}
}

func TestBadNetwork(t *testing.T) {
	for _, net := range []Network{
		{Think: -1},
		{Stations: []Station{{Demand: math.NaN(), Servers: 1}}},
		{Stations: []Station{{Demand: 1, Servers: 0}}},
	} {
		if _, err := MVA(net, 3); err == nil {
			t.Errorf("%+v accepted", net)
		}
	}
}

// TestSolveOpen checks the open network against the M/M/1 and M/M/c
// formulas: R = S/(1−ρ) at an M/M/1 queue; Erlang C = 1/3 for two
// servers at one Erlang, so W = C·S/(c−a) = S/3.
func TestSolveOpen(t *testing.T) {
	net := Network{Stations: []Station{
		{Name: "a", Kind: Queueing, Servers: 1, Demand: 0.010},
		{Name: "b", Kind: Queueing, Servers: 2, Demand: 0.050},
		{Name: "d", Kind: Delay, Demand: 0.100},
	}}
	sol, err := SolveOpen(net, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.010 / (1 - 0.2), 0.050 + 0.050/3, 0.100}
	for k, w := range want {
		if math.Abs(sol.Residence[k]-w) > 1e-12 {
			t.Errorf("station %s: residence %.9f, want %.9f", net.Stations[k].Name, sol.Residence[k], w)
		}
	}
	if r := want[0] + want[1] + want[2]; math.Abs(sol.Response-r) > 1e-12 || sol.Throughput != 20 {
		t.Errorf("response %.9f at %v/s, want %.9f at 20/s", sol.Response, sol.Throughput, r)
	}
	if u := sol.Util[1]; math.Abs(u-0.5) > 1e-12 {
		t.Errorf("M/M/2 utilisation %v, want 0.5", u)
	}
	_, err = SolveOpen(net, 40) // b needs 2 of its 2 servers
	var ue *UnstableError
	if !errors.As(err, &ue) || ue.Station != "b" || ue.Servers != 2 {
		t.Errorf("at 40/s: got %v, want b unstable", err)
	}
	if _, err := SolveOpen(net, 0); !errors.Is(err, ErrBadNetwork) {
		t.Errorf("rate 0: got %v, want ErrBadNetwork", err)
	}
}
