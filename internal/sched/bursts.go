package sched

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/latscope/latscope/internal/churn"

	"github.com/latscope/latscope/internal/units"

	"github.com/latscope/latscope/internal/tracein"
)

// CauseKind tells a creation from a wakeup.
type CauseKind uint8

// Cause kinds.
const (
	CauseWake   CauseKind = iota // Waiting → Runnable
	CauseCreate                  // NotExist → Runnable (`go f()`)
)

var causeKindNames = [...]string{CauseWake: "wake", CauseCreate: "create"}

// String returns "wake" or "create".
func (k CauseKind) String() string {
	if int(k) < len(causeKindNames) {
		return causeKindNames[k]
	}
	return "wake"
}

// MarshalText encodes the kind by name.
func (k CauseKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Cause is who made goroutines runnable, by application frame.
type Cause struct {
	Kind CauseKind `json:"kind"`
	// Actor is the application frame of the creator's or waker's stack; ""
	// when the waker was the network poller or a timer (no goroutine).
	Actor string `json:"actor"`
	// Target is the application frame of the goroutine made runnable: its
	// start frame when created, where it blocked when woken.
	Target   string  `json:"target"`
	Count    int64   `json:"count"`
	PerBurst float64 `json:"per_burst"` // Count / large bursts
}

// causeKey is a cause with its frames as indexes into the analyser's name
// table (0 is ""), so counting one costs no string hashing.
type causeKey struct {
	kind          CauseKind
	actor, target int32
}

// BurstStats describes wakeups and creations clustered in time.
type BurstStats struct {
	Gap         time.Duration `json:"-"`        // largest gap inside a burst (JSON: gap_ms)
	MinSize     int           `json:"min_size"` // a large burst has at least this many
	Count       int64         `json:"count"`    // bursts, of any size
	Median      int           `json:"median_size"`
	P90         int           `json:"p90_size"`
	Max         int           `json:"max_size"`
	Large       int64         `json:"large"`    // bursts of MinSize or more
	InLarge     int64         `json:"in_large"` // wakeups and creations in them
	LargeMedian int           `json:"large_median_size"`
	// Busiest is the share of all wakeups and creations that fell in the
	// busiest tenth of the Gap-wide time bins between the first and the
	// last: about 0.1 for a steady stream, near 1 for bursts.
	Busiest float64 `json:"busiest_tenth_share"`
}

// MarshalJSON writes Gap in milliseconds.
func (b BurstStats) MarshalJSON() ([]byte, error) {
	type plain BurstStats
	return json.Marshal(struct {
		Gap float64 `json:"gap_ms"`
		plain
	}{units.Ms(b.Gap), plain(b)})
}

// bursts clusters wakeup and creation events in one pass (churn.Clusters)
// and counts the causes of the large bursts.
type bursts struct {
	cl      *churn.Clusters
	gap     int64
	min     int
	current causeCounts // the open burst's
	st      BurstStats
	causes  map[causeKey]int64 // in large bursts

	// time bins of width gap: the current one and how many bins held each count
	total         int64
	bin, firstBin int64
	binN          int64
	binsByCount   map[int64]int64
}

func newBursts(t Thresholds) *bursts {
	return &bursts{
		cl:  churn.NewClusters(t.BurstGap),
		gap: int64(t.BurstGap), min: t.MinBurst,
		causes: map[causeKey]int64{}, binsByCount: map[int64]int64{},
		st: BurstStats{Gap: t.BurstGap, MinSize: t.MinBurst},
	}
}

// add records one goroutine made runnable at t.
func (b *bursts) add(t tracein.Time, k causeKey) {
	if n := b.cl.Add(int64(t)); n > 0 {
		b.closed(n)
	}
	b.current.add(k)
	b.addBin(int64(t) / b.gap)
}

func (b *bursts) addBin(bin int64) {
	if b.total == 0 {
		b.firstBin, b.bin = bin, bin
	}
	if bin != b.bin {
		b.binsByCount[b.binN]++
		b.bin, b.binN = bin, 0
	}
	b.binN++
	b.total++
}

// busiest returns the share of events in the busiest tenth of the bins
// from the first to the last.
func (b *bursts) busiest() float64 {
	if b.total == 0 {
		return 0
	}
	b.binsByCount[b.binN]++
	b.binN = 0
	counts := make([]int64, 0, len(b.binsByCount))
	for c := range b.binsByCount {
		counts = append(counts, c)
	}
	sort.Slice(counts, func(i, j int) bool { return counts[i] > counts[j] })
	bins := b.bin - b.firstBin + 1
	take := max((bins+9)/10, 1)
	var sum int64
	for _, c := range counts {
		n := min(b.binsByCount[c], take)
		sum += n * c
		if take -= n; take == 0 {
			break
		}
	}
	return float64(sum) / float64(b.total)
}

// closed counts the causes of a burst of n that has closed, if it is large.
func (b *bursts) closed(n int) {
	if n >= b.min {
		for _, c := range b.current.few {
			b.causes[c.k] += c.n
		}
		for k, n := range b.current.many {
			b.causes[k] += n
		}
	}
	b.current.reset()
}

// causeCounts counts causes: in a short list while they are few (a burst's
// wakeups come from a few places in the code, and a list of a few is
// cheaper to search than a struct key is to hash), in a map beyond. The
// list is found by a small open-addressed index (slot) rather than
// searched, since a large burst's list fills up.
type causeCounts struct {
	few  []causeCount
	last int // the index in few of the cause counted last
	many map[causeKey]int64
	// slot[h] is 1 + the index in few of a cause whose slotOf probe
	// sequence passes h, or 0; it has twice maxFew slots, so a probe ends.
	slot [2 * maxFew]uint8
}

type causeCount struct {
	k causeKey
	n int64
}

// maxFew is how many causes the list holds before the map takes the rest.
const maxFew = 32

// slotOf returns the first slot of k's probe sequence in causeCounts.slot.
func slotOf(k causeKey) uint32 {
	h := uint32(k.actor)*0x9e3779b1 ^ uint32(k.target)*0x85ebca77 ^ uint32(k.kind)*0xc2b2ae3d
	return h >> 26 // 6 bits: len(slot) is 64
}

func (c *causeCounts) add(k causeKey) {
	if c.last < len(c.few) && c.few[c.last].k == k {
		c.few[c.last].n++
		return
	}
	h := slotOf(k)
	for ; c.slot[h] != 0; h = (h + 1) % uint32(len(c.slot)) {
		if i := int(c.slot[h]) - 1; c.few[i].k == k {
			c.few[i].n++
			c.last = i
			return
		}
	}
	if len(c.few) < maxFew {
		c.few = append(c.few, causeCount{k, 1})
		c.last = len(c.few) - 1
		c.slot[h] = uint8(len(c.few))
		return
	}
	if c.many == nil {
		c.many = map[causeKey]int64{}
	}
	c.many[k]++
}

func (c *causeCounts) reset() {
	c.few, c.last = c.few[:0], 0
	clear(c.many)
	clear(c.slot[:])
}

// finish closes the open burst and returns the statistics and the top
// causes of large bursts.
// names resolves the frames of the causes.
func (b *bursts) finish(top int, names []string) (BurstStats, []Cause) {
	if n := b.cl.Close(); n > 0 {
		b.closed(n)
	}
	st := b.st
	st.Busiest = b.busiest()
	st.Count = b.cl.Count()
	st.Large, st.InLarge = b.cl.Large(b.min)
	st.Median = b.cl.Quantile(0.5, 0)
	st.P90 = b.cl.Quantile(0.9, 0)
	st.LargeMedian = b.cl.Quantile(0.5, b.min)
	st.Max = b.cl.Max()
	return st, topCauses(b.causes, names, st.Large, top)
}

func topCauses(m map[causeKey]int64, names []string, large int64, n int) []Cause {
	out := make([]Cause, 0, len(m))
	for k, c := range m {
		cs := Cause{Kind: k.kind, Actor: names[k.actor], Target: names[k.target], Count: c}
		if large > 0 {
			cs.PerBurst = float64(c) / float64(large)
		}
		out = append(out, cs)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Actor != b.Actor {
			return a.Actor < b.Actor
		}
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.Kind < b.Kind
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
