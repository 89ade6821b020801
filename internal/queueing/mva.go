package queueing

import (
	"errors"
	"fmt"
	"math"
)

// StationKind is how a station serves its customers.
type StationKind uint8

// Station kinds.
const (
	// Queueing is a load-independent queue: Servers identical servers
	// (1 for a single server) and one FCFS or processor-sharing queue.
	Queueing StationKind = iota
	// Delay is an infinite-server station: no queueing, the residence time
	// is the demand (a think time, a sleep, an upstream call).
	Delay
)

// Station is one resource of a network.
type Station struct {
	Name    string
	Kind    StationKind
	Servers int     // Queueing only: number of servers (≥ 1)
	Demand  float64 // service demand per request (visits × service time), seconds
}

// Network is a closed single-class network: Stations and a think time Z
// (seconds each client waits between requests, outside the stations).
type Network struct {
	Stations []Station
	Think    float64
}

// Solution is the network's state at one population.
type Solution struct {
	N          int
	Throughput float64   // requests per second
	Response   float64   // seconds from request to response (Σ Residence, no think time)
	Residence  []float64 // per station: time a request spends there (queue + service)
	Queue      []float64 // per station: mean number of requests there
	Util       []float64 // per station: utilisation per server (0..1); 0 for delays
}

// ErrBadNetwork is returned for a network the solvers cannot use.
var ErrBadNetwork = errors.New("bad network")

func (n *Network) check() error {
	if n.Think < 0 || math.IsNaN(n.Think) || math.IsInf(n.Think, 0) {
		return fmt.Errorf("%w: think time %v", ErrBadNetwork, n.Think)
	}
	for _, s := range n.Stations {
		if s.Demand < 0 || math.IsNaN(s.Demand) || math.IsInf(s.Demand, 0) {
			return fmt.Errorf("%w: station %q: demand %v", ErrBadNetwork, s.Name, s.Demand)
		}
		if s.Kind == Queueing && s.Servers < 1 {
			return fmt.Errorf("%w: station %q: %d servers", ErrBadNetwork, s.Name, s.Servers)
		}
	}
	return nil
}

// MaxExactPopulation bounds MVA's population: its cost grows with N² per
// multi-server station.
const MaxExactPopulation = 5000

// MVA solves the network exactly for populations 1..n and returns the
// solution at n. Multi-server stations use the marginal-probability
// recursion (Reiser and Lavenberg; Lazowska et al., Quantitative System
// Performance, chapter 20), with p(0) computed from the utilisation so the
// recursion stays stable.
func MVA(net Network, n int) (Solution, error) {
	return mva(net, n, nil)
}

// mva is MVA; visit, when not nil, is called at each population m = 1..n
// with the throughput and each station's residence time there (the
// slice is reused: copy what is kept).
func mva(net Network, n int, visit func(m int, x float64, residence []float64)) (Solution, error) {
	if err := net.check(); err != nil {
		return Solution{}, err
	}
	if n < 0 || n > MaxExactPopulation {
		return Solution{}, fmt.Errorf("%w: population %d (0..%d)", ErrBadNetwork, n, MaxExactPopulation)
	}
	K := len(net.Stations)
	sol := Solution{N: n, Residence: make([]float64, K), Queue: make([]float64, K), Util: make([]float64, K)}
	q := make([]float64, K)   // Q_k(n-1)
	p := make([][]float64, K) // p_k(j | n-1), j = 0..c-1 (multi-server only)
	// A station with at least n servers never queues: it is a delay that
	// still reports its utilisation (and needs no probabilities).
	kind := make([]StationKind, K)
	for k, s := range net.Stations {
		kind[k] = s.Kind
		if s.Kind == Queueing && s.Servers >= n && s.Servers > 1 {
			kind[k] = Delay
		}
		if kind[k] == Queueing && s.Servers > 1 {
			p[k] = make([]float64, s.Servers)
			p[k][0] = 1
		}
	}
	pn := make([]float64, 0, 64)
	for m := 1; m <= n; m++ {
		var R float64
		for k, s := range net.Stations {
			switch {
			case kind[k] == Delay:
				sol.Residence[k] = s.Demand
			case s.Servers == 1:
				sol.Residence[k] = s.Demand * (1 + q[k])
			default:
				// R = D/c · (1 + Q(n-1) + Σ_{j<c-1} (c-1-j) p(j|n-1))
				c := s.Servers
				sum := 1 + q[k]
				for j := 0; j < c-1 && j < len(p[k]); j++ {
					sum += float64(c-1-j) * p[k][j]
				}
				sol.Residence[k] = s.Demand / float64(c) * sum
			}
			R += sol.Residence[k]
		}
		X := 0.0
		if R+net.Think > 0 {
			X = float64(m) / (R + net.Think)
		}
		for k, s := range net.Stations {
			q[k] = X * sol.Residence[k]
			if kind[k] != Queueing || s.Servers == 1 {
				continue
			}
			c := s.Servers
			// p(j|m) = X·D/α(j) · p(j-1|m-1) for j = 1..c-1, α(j) = j.
			pn = pn[:0]
			pn = append(pn, 0)
			for j := 1; j < c; j++ {
				pn = append(pn, X*s.Demand/float64(j)*p[k][j-1])
			}
			// p(0|m) from U = X·D/c = Σ min(j,c)/c p(j).
			p0 := 1 - X*s.Demand/float64(c)
			for j := 1; j < c; j++ {
				p0 -= float64(c-j) / float64(c) * pn[j]
			}
			pn[0] = max(p0, 0)
			copy(p[k], pn)
		}
		sol.Throughput, sol.Response = X, R
		if visit != nil {
			visit(m, X, sol.Residence)
		}
	}
	copy(sol.Queue, q)
	sol.fillUtil(net)
	return sol, nil
}

func (sol *Solution) fillUtil(net Network) {
	for k, s := range net.Stations {
		if s.Kind == Queueing {
			sol.Util[k] = min(sol.Throughput*s.Demand/float64(s.Servers), 1)
		}
	}
}

// Approximate solves the network with the Schweitzer–Bard approximation
// (Q_k(n−1) ≈ (n−1)/n · Q_k(n)), a multi-server station taken as Seidmann's
// pair: a single server of demand D/c followed by a delay of D·(c−1)/c. It
// costs O(K) per iteration whatever n, for populations MVA cannot reach;
// its error is a few per cent near saturation.
func Approximate(net Network, n int) (Solution, error) {
	if err := net.check(); err != nil {
		return Solution{}, err
	}
	if n < 0 {
		return Solution{}, fmt.Errorf("%w: population %d", ErrBadNetwork, n)
	}
	K := len(net.Stations)
	sol := Solution{N: n, Residence: make([]float64, K), Queue: make([]float64, K), Util: make([]float64, K)}
	if n == 0 {
		return sol, nil
	}
	q := make([]float64, K) // population of each station's queueing part
	for k := range q {
		q[k] = float64(n) / float64(K)
	}
	N := float64(n)
	for it := 0; it < 100000; it++ {
		var R float64
		for k, s := range net.Stations {
			if s.Kind == Delay {
				sol.Residence[k] = s.Demand
			} else {
				c := float64(s.Servers)
				sol.Residence[k] = s.Demand/c*(1+(N-1)/N*q[k]) + s.Demand*(c-1)/c
			}
			R += sol.Residence[k]
		}
		X := 0.0
		if R+net.Think > 0 {
			X = N / (R + net.Think)
		}
		diff := 0.0
		for k, s := range net.Stations {
			nq := 0.0
			if s.Kind == Queueing {
				c := float64(s.Servers)
				nq = X * s.Demand / c * (1 + (N-1)/N*q[k])
			}
			diff = max(diff, math.Abs(nq-q[k]))
			q[k] = nq
		}
		sol.Throughput, sol.Response = X, R
		if diff < 1e-10*N {
			break
		}
	}
	for k := range q {
		sol.Queue[k] = sol.Throughput * sol.Residence[k]
	}
	sol.fillUtil(net)
	return sol, nil
}

// Solve uses MVA up to MaxExactPopulation and Approximate beyond.
func Solve(net Network, n int) (Solution, error) {
	if n <= MaxExactPopulation {
		return MVA(net, n)
	}
	return Approximate(net, n)
}

// Bottleneck returns the index of the station with the highest utilisation
// (queueing stations only), or -1 when there is none.
func (sol *Solution) Bottleneck() int {
	best := -1
	for k, u := range sol.Util {
		if u > 0 && (best < 0 || u > sol.Util[best]) {
			best = k
		}
	}
	return best
}
