package gotable

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/latscope/latscope/internal/tracein"
)

// TestAgainstMap drives a Table and a map with the same random operations,
// IDs clustered the way the runtime hands them out, and compares them.
func TestAgainstMap(t *testing.T) {
	var tab Table[int]
	ref := map[tracein.GoID]*int{}
	rng := rand.New(rand.NewPCG(1, 2))
	next := tracein.GoID(1)
	for step := range 200000 {
		var id tracein.GoID
		switch r := rng.IntN(10); {
		case r < 3:
			id = next
			next += tracein.GoID(1 + rng.IntN(3))
		case r < 5:
			id = tracein.GoID(rng.Int64N(int64(next) + 1))
		default:
			id = max(0, next-tracein.GoID(rng.IntN(600)))
		}
		switch rng.IntN(3) {
		case 0:
			v := new(int)
			*v = step
			tab.Set(id, v)
			ref[id] = v
		case 1:
			tab.Delete(id)
			delete(ref, id)
		}
		if got, want := tab.Get(id), ref[id]; got != want {
			t.Fatalf("step %d: Get(%d) = %v, want %v", step, id, got, want)
		}
	}
	if tab.Len() != len(ref) {
		t.Fatalf("Len = %d, want %d", tab.Len(), len(ref))
	}
	seen := 0
	for id, v := range tab.All() {
		if ref[id] != v {
			t.Fatalf("All yields %d → %v, want %v", id, v, ref[id])
		}
		seen++
	}
	if seen != len(ref) {
		t.Fatalf("All yields %d entries, want %d", seen, len(ref))
	}
	for id := range ref {
		tab.Delete(id)
	}
	if tab.Len() != 0 || len(tab.old) != 0 || slices.ContainsFunc(tab.dense, func(p *page[int]) bool { return p != nil }) {
		t.Fatalf("after deleting all: Len %d, pages kept", tab.Len())
	}
}

// TestFarIDs keeps long-lived goroutines with low IDs while new IDs run
// far ahead, so the dense window slides and old pages move to the map.
func TestFarIDs(t *testing.T) {
	var tab Table[int]
	ids := []tracein.GoID{1, 2, 300, 5 << 20, 3, 20 << 20, 20<<20 + 1, 60 << 20, 7, 61 << 20}
	vals := make([]int, len(ids))
	for i, id := range ids {
		vals[i] = i
		tab.Set(id, &vals[i])
		for j, id := range ids[:i+1] {
			if got := tab.Get(id); got != &vals[j] {
				t.Fatalf("after setting %d: Get(%d) = %v, want %d", ids[i], id, got, j)
			}
		}
	}
	if tab.Len() != len(ids) || len(tab.dense) > maxDense {
		t.Fatalf("Len %d, %d dense pages", tab.Len(), len(tab.dense))
	}
	n := 0
	for range tab.All() {
		n++
	}
	if n != len(ids) {
		t.Fatalf("All yields %d, want %d", n, len(ids))
	}
	for _, id := range ids {
		tab.Delete(id)
		if tab.Get(id) != nil {
			t.Fatalf("Get(%d) after Delete", id)
		}
	}
	if tab.Len() != 0 || len(tab.old) != 0 {
		t.Fatalf("Len %d, %d old pages after deleting all", tab.Len(), len(tab.old))
	}
}

func TestNegativeIDs(t *testing.T) {
	var tab Table[int]
	v := 1
	tab.Set(tracein.NoGoroutine, &v)
	tab.Delete(tracein.NoGoroutine)
	if tab.Get(tracein.NoGoroutine) != nil || tab.Len() != 0 {
		t.Fatal("NoGoroutine must never be stored")
	}
}

// BenchmarkLookup compares a Table with a map on lookups of clustered IDs
// among 20 000 live goroutines.
func BenchmarkLookup(b *testing.B) {
	const live = 20000
	ids := make([]tracein.GoID, live)
	var tab Table[int]
	m := map[tracein.GoID]*int{}
	for i := range ids {
		ids[i] = tracein.GoID(1000 + i*3)
		v := i
		tab.Set(ids[i], &v)
		m[ids[i]] = &v
	}
	rng := rand.New(rand.NewPCG(3, 4))
	order := make([]tracein.GoID, 1<<16)
	for i := range order {
		order[i] = ids[rng.IntN(live)]
	}
	b.Run("table", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = tab.Get(order[i&(len(order)-1)])
		}
	})
	b.Run("map", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = m[order[i&(len(order)-1)]]
		}
	})
}
