package queueing

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMultiServerExact: one c-server queue behind n thinking clients has a
// closed-form product-form solution (productForm); the solver must give
// it, where MVA's marginal-probability recursion had drifted (200 clients
// thinking 100 ms, 16 servers of 10 ms: 1,316 requests a second against
// the exact 1,596).
func TestMultiServerExact(t *testing.T) {
	for _, c := range []struct {
		n    int
		z, d float64
		c    int
	}{{200, 0.1, 0.01, 16}, {100, 0.05, 0.01, 8}, {40, 0.005, 0.002, 2}, {40, 0, 0.02, 6}, {1000, 0.5, 0.02, 32}, {3, 0.01, 0.01, 2}} {
		sol, err := MVA(Network{Stations: []Station{{Name: "q", Kind: Queueing, Servers: c.c, Demand: c.d}}, Think: c.z}, c.n)
		if err != nil {
			t.Fatal(err)
		}
		x, r := productForm(c.n, c.z, c.d, c.c)
		if !relNear(sol.Throughput, x, 1e-9) || !relNear(sol.Response, r, 1e-9) {
			t.Errorf("%+v: X %.9g R %.9g, exact X %.9g R %.9g", c, sol.Throughput, sol.Response, x, r)
		}
	}
}

// TestConvolutionIsMVA: on networks of single-server queues and delays,
// whose MVA recursion is exact and stable, the convolution algorithm gives
// MVA's answer at every population.
func TestConvolutionIsMVA(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var net Network
		for k := range 1 + rng.IntN(4) {
			s := Station{Name: string(rune('a' + k)), Kind: Queueing, Servers: 1, Demand: rng.Float64() * 0.02}
			if rng.IntN(3) == 0 {
				s.Kind, s.Servers = Delay, 0
			}
			net.Stations = append(net.Stations, s)
		}
		net.Think = rng.Float64() * 0.05
		n := 1 + rng.IntN(60)
		type point struct {
			x float64
			r []float64
		}
		var want []point
		if _, err := mva(net, n, func(m int, x float64, r []float64) { want = append(want, point{x, append([]float64(nil), r...)}) }); err != nil {
			t.Fatal(err)
		}
		m := 0
		convolution(net, n, func(_ int, x float64, r []float64) {
			w := want[m]
			m++
			if !relNear(x, w.x, 1e-9) {
				t.Fatalf("%+v at %d: X %.12g, MVA %.12g", net, m, x, w.x)
			}
			for k := range r {
				if !relNear(r[k], w.r[k], 1e-8) && w.r[k] > 1e-12 {
					t.Fatalf("%+v at %d: station %d residence %.12g, MVA %.12g", net, m, k, r[k], w.r[k])
				}
			}
		})
	}
}

// BenchmarkMultiServer: the convolution algorithm's cost at a large
// population (O(K·n²)): a CPU of 2 cores, a pool of 10 and a delay.
func BenchmarkMultiServer(b *testing.B) {
	net := Network{Stations: []Station{{Name: "cpu", Kind: Queueing, Servers: 2, Demand: 0.002}, {Name: "pool", Kind: Queueing, Servers: 10, Demand: 0.02}, {Name: "up", Kind: Delay, Demand: 0.01}}, Think: 0.1}
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := MVA(net, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
