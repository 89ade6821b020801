package queueing

import (
	"fmt"
	"math"
)

// Workers solutions: a server that serves with W threads (a JVM HTTP
// server's executor, a worker pool) lets at most W requests in; the others
// wait in its queue, outside the request that a trace or recording times.
// The network inside is replaced by its flow-equivalent server (Chandy,
// Herzog and Woo; Lazowska et al., Quantitative System Performance,
// chapter 8): a load-dependent station whose rate with j requests present
// is the inner network's throughput at min(j, W), solved exactly by MVA.
// The decomposition is exact for product-form networks.

// WorkersSolution is a network solved behind a server's workers: Solution
// holds the stations inside (Response is the time inside, the request as
// timed), Queue the mean time a request waits for a worker.
type WorkersSolution struct {
	Solution
	Workers int
	// QueueWait is the mean time, seconds, a request waits for a worker,
	// outside the stations.
	QueueWait float64
	// Busy is the mean number of busy workers over Workers (0..1).
	Busy float64
}

// inner is the inner network's throughput and per-station mean population
// at each population 1..w (index m-1).
type inner struct {
	x []float64
	q [][]float64
}

func solveInner(net Network, w int) (inner, error) {
	in := inner{x: make([]float64, w), q: make([][]float64, w)}
	net.Think = 0
	_, err := mva(net, w, func(m int, x float64, residence []float64) {
		in.x[m-1] = x
		q := make([]float64, len(residence))
		for k, r := range residence {
			q[k] = x * r
		}
		in.q[m-1] = q
	})
	return in, err
}

// rate is the flow-equivalent server's rate with j ≥ 1 requests present.
func (in inner) rate(j int) float64 { return in.x[min(j, len(in.x))-1] }

func (in inner) pop(j int) []float64 { return in.q[min(j, len(in.q))-1] }

// SolveWorkers solves the closed network net for n clients (think time
// net.Think) behind w workers. With n ≤ w no request waits for a worker
// and the result is Solve's.
func SolveWorkers(net Network, n, w int) (WorkersSolution, error) {
	if w < 1 || w > MaxExactPopulation {
		return WorkersSolution{}, fmt.Errorf("%w: %d workers (1..%d)", ErrBadNetwork, w, MaxExactPopulation)
	}
	if n > MaxExactPopulation {
		return WorkersSolution{}, fmt.Errorf("%w: population %d (0..%d)", ErrBadNetwork, n, MaxExactPopulation)
	}
	if n <= w {
		sol, err := Solve(net, n)
		return WorkersSolution{Solution: sol, Workers: w, Busy: busy(sol.Throughput*sol.Response, w)}, err
	}
	if err := net.check(); err != nil {
		return WorkersSolution{}, err
	}
	in, err := solveInner(net, w)
	if err != nil {
		return WorkersSolution{}, err
	}
	if in.x[w-1] <= 0 || math.IsInf(in.x[w-1], 0) {
		// no demand inside: no request stays, none waits for a worker
		sol, err := Solve(net, n)
		return WorkersSolution{Solution: sol, Workers: w}, err
	}
	// Product form of a delay (the clients' think time Z) and the
	// flow-equivalent server: P(j) ∝ Z^(n−j)/(n−j)! · Π_{i≤j} 1/rate(i).
	p := make([]float64, n+1)
	if net.Think <= 0 {
		p[n] = 1
	} else {
		lw := make([]float64, n+1)
		var prod float64
		top := math.Inf(-1)
		for j := 0; j <= n; j++ {
			if j > 0 {
				prod -= math.Log(in.rate(j))
			}
			lg, _ := math.Lgamma(float64(n-j) + 1)
			lw[j] = float64(n-j)*math.Log(net.Think) - lg + prod
			top = max(top, lw[j])
		}
		var sum float64
		for j := range p {
			p[j] = math.Exp(lw[j] - top)
			sum += p[j]
		}
		for j := range p {
			p[j] /= sum
		}
	}
	return fes(net, in, w, p, 0)
}

// SolveOpenWorkers solves net as an open network with arrivals at lambda
// per second behind w workers: a birth–death queue whose death rate with j
// requests present is the inner network's throughput at min(j, w). It
// fails with an UnstableError when the arrivals reach what w workers can
// serve.
func SolveOpenWorkers(net Network, lambda float64, w int) (WorkersSolution, error) {
	if w < 1 || w > MaxExactPopulation {
		return WorkersSolution{}, fmt.Errorf("%w: %d workers (1..%d)", ErrBadNetwork, w, MaxExactPopulation)
	}
	if err := net.check(); err != nil {
		return WorkersSolution{}, err
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return WorkersSolution{}, fmt.Errorf("%w: arrival rate %v", ErrBadNetwork, lambda)
	}
	in, err := solveInner(net, w)
	if err != nil {
		return WorkersSolution{}, err
	}
	top := in.x[w-1]
	if !(lambda < top) {
		return WorkersSolution{}, &UnstableError{Station: fmt.Sprintf("the server's %d workers", w), Load: lambda / top * float64(w), Servers: w}
	}
	// P(j) ∝ Π_{i≤j} λ/rate(i) up to w, then geometric with ratio λ/rate(w).
	lw := make([]float64, w+1)
	peak := 0.0
	for j := 1; j <= w; j++ {
		lw[j] = lw[j-1] + math.Log(lambda/in.rate(j))
		peak = max(peak, lw[j])
	}
	rho := lambda / top
	p := make([]float64, w+2) // p[w+1] holds the tail beyond w, all at population w inside
	var sum float64
	for j := 0; j <= w; j++ {
		p[j] = math.Exp(lw[j] - peak)
		sum += p[j]
	}
	tail := p[w] * rho / (1 - rho)                 // Σ_{j>w} P(j)
	queued := p[w] * rho / ((1 - rho) * (1 - rho)) // Σ_{j>w} (j−w) P(j)
	sum += tail
	for j := range p {
		p[j] /= sum
	}
	p[w+1] = tail / sum
	ws, err := fes(net, in, w, p[:w+1], p[w+1])
	if err != nil {
		return ws, err
	}
	ws.Throughput = lambda
	ws.QueueWait = queued / sum / lambda
	ws.fillUtil(net)
	return ws, nil
}

// fes turns the distribution p of requests present (index j = 0..len−1;
// more than w wait for a worker) and the probability beyond of more than
// len(p)−1 present, all with w inside, into the stations' means.
func fes(net Network, in inner, w int, p []float64, beyond float64) (WorkersSolution, error) {
	K := len(net.Stations)
	ws := WorkersSolution{Workers: w, Solution: Solution{N: len(p) - 1, Residence: make([]float64, K), Queue: make([]float64, K), Util: make([]float64, K)}}
	var x, inside, waiting float64
	for j := 1; j < len(p); j++ {
		x += p[j] * in.rate(j)
		inside += p[j] * float64(min(j, w))
		waiting += p[j] * float64(max(0, j-w))
		for k, q := range in.pop(j) {
			ws.Queue[k] += p[j] * q
		}
	}
	if beyond > 0 {
		x += beyond * in.rate(w)
		inside += beyond * float64(w)
		for k, q := range in.pop(w) {
			ws.Queue[k] += beyond * q
		}
	}
	if x <= 0 {
		return ws, fmt.Errorf("%w: no throughput behind %d workers", ErrBadNetwork, w)
	}
	ws.Throughput = x
	for k := range ws.Residence {
		ws.Residence[k] = ws.Queue[k] / x
		ws.Response += ws.Residence[k]
	}
	ws.QueueWait = waiting / x
	ws.Busy = busy(inside, w)
	ws.fillUtil(net)
	return ws, nil
}

func busy(inside float64, w int) float64 { return min(1, inside/float64(w)) }
