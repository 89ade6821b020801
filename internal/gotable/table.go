// Package gotable holds per-goroutine state keyed by goroutine ID, for the
// streaming analyses that look a goroutine up on nearly every trace event.
//
// The runtime hands out goroutine IDs in increasing order, so goroutines
// alive at the same time have nearby IDs. A Table keeps them in pages of
// consecutive IDs, the recent pages in a slice: a lookup is two indexes
// instead of a probe into a map as large as the number of live goroutines.
// Memory follows the pages that hold live goroutines.
package gotable

import (
	"iter"

	"github.com/latscope/latscope/internal/tracein"
)

const (
	pageBits = 8
	pageLen  = 1 << pageBits
	// maxDense is the most pages indexed directly: IDs within 4 Mi of the
	// newest pages (128 KiB of page pointers). Older pages, of long-lived
	// goroutines, live in a map.
	maxDense = 1 << 14
)

type page[T any] struct {
	vals [pageLen]*T
	n    int // non-nil vals
}

// Table maps goroutine IDs to *T. The zero value is an empty table.
type Table[T any] struct {
	dense []*page[T] // pages base, base+1, …
	base  int64
	old   map[int64]*page[T] // pages below base
	n     int
}

// page returns the page of ID key k, creating it when create is set.
func (t *Table[T]) page(k int64, create bool) *page[T] {
	if i := k - t.base; i >= 0 && i < int64(len(t.dense)) {
		if p := t.dense[i]; p != nil || !create {
			return p
		}
	} else if p := t.old[k]; p != nil || !create {
		return p
	}
	p := new(page[T])
	switch {
	case len(t.dense) == 0 && len(t.old) == 0:
		t.base, t.dense = k, append(t.dense[:0], p)
	case k < t.base:
		if t.old == nil {
			t.old = map[int64]*page[T]{}
		}
		t.old[k] = p
	default:
		t.grow(k)
		t.dense[k-t.base] = p
	}
	return p
}

// grow extends the dense window to page k (k ≥ base), sliding it up and
// moving the pages that fall out of it to the map when it would get too long.
func (t *Table[T]) grow(k int64) {
	if k-t.base >= maxDense {
		newBase := k - maxDense/2
		for i, p := range t.dense {
			if t.base+int64(i) >= newBase {
				break
			}
			if p != nil {
				if t.old == nil {
					t.old = map[int64]*page[T]{}
				}
				t.old[t.base+int64(i)] = p
			}
		}
		if drop := newBase - t.base; drop < int64(len(t.dense)) {
			t.dense = append(t.dense[:0], t.dense[drop:]...)
		} else {
			t.dense = t.dense[:0]
		}
		t.base = newBase
	}
	for int64(len(t.dense)) <= k-t.base {
		t.dense = append(t.dense, nil)
	}
}

// Get returns the value of id, or nil: the dense window (Lookup), else
// the map of old pages (getOld).
func (t *Table[T]) Get(id tracein.GoID) *T {
	if v, ok := t.Lookup(id); ok {
		return v
	}
	return t.getOld(id)
}

// Lookup is Get in the dense window alone, where the goroutines of a
// stream's recent events are: ok is false when id is outside it, and then
// Get must be asked. It is small enough to be inlined into the callers'
// per-event code, which Get, with its call for old pages, is not.
func (t *Table[T]) Lookup(id tracein.GoID) (v *T, ok bool) {
	// (base ≥ 0, so a negative ID's page is out of the window)
	if i := uint64(int64(id)>>pageBits - t.base); i < uint64(len(t.dense)) {
		if p := t.dense[i]; p != nil {
			return p.vals[id&(pageLen-1)], true
		}
		return nil, true
	}
	return nil, false
}

// getOld is Get for an ID outside the dense window.
func (t *Table[T]) getOld(id tracein.GoID) *T {
	if id < 0 {
		return nil
	}
	p := t.page(int64(id)>>pageBits, false)
	if p == nil {
		return nil
	}
	return p.vals[id&(pageLen-1)]
}

// Set stores v (not nil) for id; negative IDs (tracein.NoGoroutine) are ignored.
func (t *Table[T]) Set(id tracein.GoID, v *T) {
	if id < 0 || v == nil {
		return
	}
	p := t.page(int64(id)>>pageBits, true)
	slot := &p.vals[id&(pageLen-1)]
	if *slot == nil {
		p.n++
		t.n++
	}
	*slot = v
}

// Delete removes id. A page left empty is freed, so memory follows the
// goroutines alive, not all that ever lived.
func (t *Table[T]) Delete(id tracein.GoID) {
	if id < 0 {
		return
	}
	k := int64(id) >> pageBits
	p := t.page(k, false)
	if p == nil {
		return
	}
	slot := &p.vals[id&(pageLen-1)]
	if *slot == nil {
		return
	}
	*slot = nil
	p.n--
	t.n--
	if p.n == 0 {
		if i := k - t.base; i >= 0 && i < int64(len(t.dense)) {
			t.dense[i] = nil
		} else {
			delete(t.old, k)
		}
	}
}

// Len returns the number of goroutines in the table.
func (t *Table[T]) Len() int { return t.n }

// All yields every goroutine and its value, in no particular order. The
// table must not be changed during the iteration.
func (t *Table[T]) All() iter.Seq2[tracein.GoID, *T] {
	return func(yield func(tracein.GoID, *T) bool) {
		each := func(k int64, p *page[T]) bool {
			for i, v := range p.vals {
				if v != nil && !yield(tracein.GoID(k<<pageBits|int64(i)), v) {
					return false
				}
			}
			return true
		}
		for i, p := range t.dense {
			if p != nil && !each(t.base+int64(i), p) {
				return
			}
		}
		for k, p := range t.old {
			if !each(k, p) {
				return
			}
		}
	}
}
