package churn

import (
	"slices"
	"time"
)

// Clusters groups event times into bursts, in one pass over times in
// order: an event more than the gap after the previous one starts a new
// burst. It keeps the histogram of the burst sizes.
type Clusters struct {
	gap   int64
	n     int   // events in the open burst
	last  int64 // the open burst's last event
	count int64 // closed bursts
	sizes map[int]int64
}

// NewClusters returns an empty clustering with the gap that ends a burst.
func NewClusters(gap time.Duration) *Clusters {
	return &Clusters{gap: int64(gap), sizes: map[int]int64{}}
}

// Add adds an event at t (ns; not before the previous one) and returns the
// size of the burst it closed, or 0.
func (c *Clusters) Add(t int64) (closed int) {
	if c.n > 0 && t-c.last > c.gap {
		closed = c.Close()
	}
	c.n++
	c.last = t
	return closed
}

// Close closes the open burst and returns its size, or 0 when none is open.
func (c *Clusters) Close() int {
	n := c.n
	if n == 0 {
		return 0
	}
	c.sizes[n]++
	c.count++
	c.n = 0
	return n
}

// Count returns the closed bursts.
func (c *Clusters) Count() int64 { return c.count }

// sorted returns the burst sizes seen, smallest first.
func (c *Clusters) sorted() []int {
	out := make([]int, 0, len(c.sizes))
	for s := range c.sizes {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Max returns the largest closed burst's size, 0 without one.
func (c *Clusters) Max() int {
	m := 0
	for s := range c.sizes {
		m = max(m, s)
	}
	return m
}

// Large returns the bursts of at least min events, and the events in them.
func (c *Clusters) Large(min int) (bursts, events int64) {
	for s, n := range c.sizes {
		if s >= min {
			bursts += n
			events += n * int64(s)
		}
	}
	return bursts, events
}

// Quantile returns the q-quantile of the sizes of at least from: the
// size of rank ⌊q·n + ½⌋ (at least 1) of the n bursts that large, 0
// without one. Go's rule: its median of an even count is the lower one.
func (c *Clusters) Quantile(q float64, from int) int {
	n, _ := c.Large(from)
	return c.rank(max(int64(q*float64(n)+0.5), 1), n, from)
}

// UpperMedian returns the median of the sizes of at least from, the upper
// one of an even count (rank ⌊n/2⌋ + 1), 0 without one: the JVM's rule.
func (c *Clusters) UpperMedian(from int) int {
	n, _ := c.Large(from)
	return c.rank(n/2+1, n, from)
}

// rank returns the size of the given rank among the n sizes of at least
// from.
func (c *Clusters) rank(rank, n int64, from int) int {
	if n == 0 {
		return 0
	}
	sizes := c.sorted()
	var seen int64
	for _, s := range sizes {
		if s < from {
			continue
		}
		seen += c.sizes[s]
		if seen >= rank {
			return s
		}
	}
	return sizes[len(sizes)-1]
}
