package queueing

import (
	"fmt"
	"math"
)

// ErlangC returns the probability that an arrival waits in an M/M/c queue
// with c servers and offered load a = λ·S (in Erlangs). It is 1 when
// a ≥ c (the queue is unstable).
func ErlangC(c int, a float64) float64 {
	if c < 1 || a < 0 || math.IsNaN(a) {
		return math.NaN()
	}
	if a >= float64(c) {
		return 1
	}
	// Erlang B by its stable recursion, then C = B / (1 − ρ(1 − B)).
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	rho := a / float64(c)
	return b / (1 - rho*(1-b))
}

// MMc is the open M/M/c queue's mean behaviour.
type MMc struct {
	Util     float64 // ρ = λS/c
	PWait    float64 // Erlang C
	Wait     float64 // mean time in queue, seconds
	Response float64 // Wait + S
	Queue    float64 // mean number in the system (Little)
}

// OpenMMc solves an M/M/c queue with arrival rate lambda (per second),
// mean service time s (seconds) and c servers. It fails when the queue is
// unstable (λS ≥ c).
func OpenMMc(lambda, s float64, c int) (MMc, error) {
	if c < 1 || lambda < 0 || s < 0 || math.IsNaN(lambda+s) || math.IsInf(lambda+s, 0) {
		return MMc{}, fmt.Errorf("%w: M/M/c with λ=%v, S=%v, c=%d", ErrBadNetwork, lambda, s, c)
	}
	a := lambda * s
	if a >= float64(c) {
		return MMc{}, fmt.Errorf("%w: M/M/%d unstable: offered load %.3g ≥ %d servers", ErrBadNetwork, c, a, c)
	}
	m := MMc{Util: a / float64(c), PWait: ErlangC(c, a)}
	if s > 0 {
		m.Wait = m.PWait * s / (float64(c) - a)
	}
	m.Response = m.Wait + s
	m.Queue = lambda * m.Response
	return m, nil
}

// SolveOpen solves net as an open network with arrival rate lambda
// (requests per second): each queueing station an M/M/c queue with its
// demand as service time, each delay its demand. Think time plays no part.
// It fails, naming the station, when a station's offered load reaches its
// servers: the queue then grows without bound.
func SolveOpen(net Network, lambda float64) (Solution, error) {
	if err := net.check(); err != nil {
		return Solution{}, err
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return Solution{}, fmt.Errorf("%w: arrival rate %v", ErrBadNetwork, lambda)
	}
	sol := Solution{Throughput: lambda, Residence: make([]float64, len(net.Stations)),
		Queue: make([]float64, len(net.Stations)), Util: make([]float64, len(net.Stations))}
	for k, s := range net.Stations {
		if s.Kind == Delay {
			sol.Residence[k] = s.Demand
		} else {
			m, err := OpenMMc(lambda, s.Demand, s.Servers)
			if err != nil {
				return Solution{}, &UnstableError{Station: s.Name, Load: lambda * s.Demand, Servers: s.Servers}
			}
			sol.Residence[k], sol.Util[k] = m.Response, m.Util
		}
		sol.Queue[k] = lambda * sol.Residence[k]
		sol.Response += sol.Residence[k]
	}
	return sol, nil
}

// UnstableError says that an open network cannot keep up: a station's
// offered load (arrival rate × demand) reaches its servers.
type UnstableError struct {
	Station string
	Load    float64 // offered load, in servers
	Servers int
}

func (e *UnstableError) Error() string {
	return fmt.Sprintf("%s cannot keep up: the arrivals need %.3g of its %d servers, so its queue grows without bound", e.Station, e.Load, e.Servers)
}
