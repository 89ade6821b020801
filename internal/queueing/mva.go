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
// solution at n: by the MVA recursion for single-server queues and delays
// (a station with at least n servers never queues: a delay), and by the
// convolution algorithm (convolution.go) when a station has 1 < c < n
// servers, where MVA's marginal-probability recursion (Reiser and
// Lavenberg) loses its precision near saturation.
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
	if multiServer(net, n) {
		return convolution(net, n, visit), nil
	}
	K := len(net.Stations)
	sol := Solution{N: n, Residence: make([]float64, K), Queue: make([]float64, K), Util: make([]float64, K)}
	q := make([]float64, K) // Q_k(m-1)
	for m := 1; m <= n; m++ {
		var R float64
		for k, s := range net.Stations {
			// every queue here has one server, or at least n: a delay that
			// still reports its utilisation
			if s.Kind == Delay || s.Servers > 1 {
				sol.Residence[k] = s.Demand
			} else {
				sol.Residence[k] = s.Demand * (1 + q[k])
			}
			R += sol.Residence[k]
		}
		X := 0.0
		if R+net.Think > 0 {
			X = float64(m) / (R + net.Think)
		}
		for k := range q {
			q[k] = X * sol.Residence[k]
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
