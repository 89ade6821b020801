// Package gotable holds per-goroutine state keyed by goroutine ID, for the
// streaming analyses that look a goroutine up on nearly every trace event.
//
// The runtime hands out goroutine IDs in increasing order, so goroutines
// alive at the same time have nearby IDs. A Table keeps them in pages of
// consecutive IDs: a lookup is one small-map probe for the page (usually
// skipped: the last page used is remembered) and one index, instead of a
// probe into a map as large as the number of live goroutines.
package gotable

import (
	"iter"

	"github.com/latscope/latscope/tracein"
)

const (
	pageBits = 8
	pageLen  = 1 << pageBits
)

type page[T any] struct {
	vals [pageLen]*T
	n    int // non-nil vals
}

// Table maps goroutine IDs to *T. The zero value is an empty table.
type Table[T any] struct {
	pages    map[int64]*page[T]
	lastKey  int64
	lastPage *page[T] // nil when lastKey is not cached
	n        int
}

func (t *Table[T]) page(id tracein.GoID, create bool) *page[T] {
	k := int64(id) >> pageBits
	if t.lastPage != nil && t.lastKey == k {
		return t.lastPage
	}
	p := t.pages[k]
	if p == nil {
		if !create {
			return nil
		}
		if t.pages == nil {
			t.pages = map[int64]*page[T]{}
		}
		p = new(page[T])
		t.pages[k] = p
	}
	t.lastKey, t.lastPage = k, p
	return p
}

// Get returns the value of id, or nil.
func (t *Table[T]) Get(id tracein.GoID) *T {
	if id < 0 {
		return nil
	}
	p := t.page(id, false)
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
	p := t.page(id, true)
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
	p := t.page(id, false)
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
		k := int64(id) >> pageBits
		delete(t.pages, k)
		if t.lastKey == k {
			t.lastPage = nil
		}
	}
}

// Len returns the number of goroutines in the table.
func (t *Table[T]) Len() int { return t.n }

// All yields every goroutine and its value, in no particular order. The
// table must not be changed during the iteration.
func (t *Table[T]) All() iter.Seq2[tracein.GoID, *T] {
	return func(yield func(tracein.GoID, *T) bool) {
		for k, p := range t.pages {
			for i, v := range p.vals {
				if v != nil && !yield(tracein.GoID(k<<pageBits|int64(i)), v) {
					return
				}
			}
		}
	}
}
