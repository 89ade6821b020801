package budget

// ServerQueue is the time a group's requests waited in the server before
// they began — a JVM HTTP server's executor queue and the reading of the
// headers, which the Java library times (io.latscope.ServerQueue) — and
// the server's workers, as its executor gave them.
type ServerQueue struct {
	Requests int   // requests with a queue time
	Queue    Stats // their queue time, ns
	// Workers is the number of threads the server's executor serves with
	// (a fixed pool's size, a ForkJoinPool's parallelism), the largest any
	// request saw; 0 when the executor did not say or is unbounded.
	Workers int
}
