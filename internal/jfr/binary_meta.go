package jfr

import (
	"fmt"
	"strconv"
)

// The metadata event of a chunk describes every type its events and
// constant pools use (docs/jfr-format.md): a string table, then a tree of
// elements — root > metadata > class > field/annotation/setting, and
// root > region. This file turns it into the types the binary reader walks.

// primKind says how a type without fields is encoded.
type primKind uint8

const (
	primStruct primKind = iota // a type with fields: its fields in order
	primBoolean
	primByte
	primChar
	primShort
	primInt
	primLong
	primFloat
	primDouble
	primString
	primUnknown // a type without fields latscope does not know: an error when a value of it is read
)

var binPrimNames = map[string]primKind{
	"boolean": primBoolean, "byte": primByte, "char": primChar, "short": primShort,
	"int": primInt, "long": primLong, "float": primFloat, "double": primDouble,
	"java.lang.String": primString,
}

// binUnit is the unit of a @Timestamp or @Timespan field.
type binUnit uint8

const (
	unitNone binUnit = iota
	unitTicks
	unitMillisSinceEpoch
	unitNanos
	unitMicros
	unitMillis
	unitSeconds
)

var binUnitNames = map[string]binUnit{
	"TICKS": unitTicks, "MILLISECONDS_SINCE_EPOCH": unitMillisSinceEpoch, "NANOSECONDS": unitNanos,
	"MICROSECONDS": unitMicros, "MILLISECONDS": unitMillis, "SECONDS": unitSeconds,
}

// binType is a class of the metadata.
type binType struct {
	id     int64
	name   string
	event  bool // its super type is jdk.jfr.Event
	prim   primKind
	fields []binField
	// empty is set for a struct whose values take no bytes (all its fields
	// are such structs), so skipping one costs nothing however it nests.
	empty bool
	// plan is the event reader's per-field actions, built on first use.
	plan *binPlan
	// pool is where the chunk's constants of this type are: key → offset
	pool map[int64]int
	// the constants of this type decoded so far, by key (a binType lives
	// as long as its chunk)
	threads map[int64]*Thread
	stacks  map[int64]*binStack
	methods map[int64]string
	texts   map[int64]binText
}

// binField is a field of a class.
type binField struct {
	name     string
	typ      *binType
	cp       bool // the value is a constant pool key
	array    bool
	unsigned bool
	stamp    binUnit // @Timestamp
	span     binUnit // @Timespan
}

// binMeta is a chunk's metadata.
type binMeta struct {
	types map[int64]*binType
}

// metaElement is one element of the metadata tree.
type metaElement struct {
	name  string
	attrs []metaAttr
	kids  []*metaElement
}

type metaAttr struct{ k, v string }

func (e *metaElement) attr(k string) (string, bool) {
	for _, a := range e.attrs {
		if a.k == k {
			return a.v, true
		}
	}
	return "", false
}

// maxMetaElements bounds the elements of a metadata tree (the JDK's has about
// 10 000).
const maxMetaElements = 1 << 20

// parseMetadata reads the metadata event that starts at b[0].
func parseMetadata(b []byte, compressed bool) (meta *binMeta, err error) {
	m := &metaReader{b: b, compressed: compressed}
	size := m.long() // a long, as every event's size
	if m.err != nil {
		return nil, fmt.Errorf("metadata event size: %w", m.err)
	}
	if size <= 0 || size > int64(len(b)) {
		return nil, fmt.Errorf("metadata event size %d outside (0, %d]", size, len(b))
	}
	m.b = b[:size]
	if id := m.long(); m.err == nil && id != 0 {
		return nil, fmt.Errorf("event type %d where the metadata event (type 0) should be", id)
	}
	m.long() // start time
	m.long() // duration
	m.long() // metadata id
	strs := make([]string, m.count())
	for i := range strs {
		strs[i] = m.str()
	}
	n := 0
	root := m.tree(strs, 0, &n)
	if m.err != nil {
		return nil, m.err
	}
	return buildMeta(root)
}

// tree reads one element and its children.
func (m *metaReader) tree(strs []string, depth int, n *int) *metaElement {
	if depth > maxDepth {
		m.fail("metadata nested over %d deep", maxDepth)
		return nil
	}
	if *n++; *n > maxMetaElements {
		m.fail("over %d metadata elements", maxMetaElements)
		return nil
	}
	e := &metaElement{name: m.ref(strs)}
	na := m.count()
	e.attrs = make([]metaAttr, 0, na)
	for range na {
		k := m.ref(strs)
		e.attrs = append(e.attrs, metaAttr{k, m.ref(strs)})
	}
	nk := m.count()
	for range nk {
		if m.err != nil {
			return e
		}
		e.kids = append(e.kids, m.tree(strs, depth+1, n))
	}
	return e
}

// buildMeta turns the element tree into types.
func buildMeta(root *metaElement) (*binMeta, error) {
	var classes []*metaElement
	for _, k := range root.kids {
		if k.name == "metadata" {
			for _, c := range k.kids {
				if c.name == "class" {
					classes = append(classes, c)
				}
			}
			break
		}
	}
	meta := &binMeta{types: make(map[int64]*binType, len(classes))}
	for _, c := range classes {
		id, err := idAttr(c, "id")
		if err != nil {
			return nil, err
		}
		name, ok := c.attr("name")
		if !ok || name == "" {
			return nil, fmt.Errorf("class %d without a name", id)
		}
		super, _ := c.attr("superType")
		t := &binType{id: id, name: name, event: super == "jdk.jfr.Event"}
		meta.types[id] = t
	}
	// annotation types by id
	annot := func(e *metaElement) (string, string) {
		id, err := idAttr(e, "class")
		if err != nil || meta.types[id] == nil {
			return "", ""
		}
		v, _ := e.attr("value")
		return meta.types[id].name, v
	}
	for _, c := range classes {
		id, _ := idAttr(c, "id")
		t := meta.types[id]
		for _, f := range c.kids {
			if f.name != "field" {
				continue
			}
			tid, err := idAttr(f, "class")
			if err != nil {
				return nil, fmt.Errorf("class %s: %w", t.name, err)
			}
			ft := meta.types[tid]
			if ft == nil {
				return nil, fmt.Errorf("class %s: field type %d is not defined", t.name, tid)
			}
			bf := binField{typ: ft}
			bf.name, _ = f.attr("name")
			_, bf.cp = f.attr("constantPool")
			if d, ok := f.attr("dimension"); ok && d != "0" {
				if d != "1" {
					return nil, fmt.Errorf("class %s: field %s has dimension %s, want 0 or 1", t.name, bf.name, d)
				}
				bf.array = true
			}
			for _, a := range f.kids {
				if a.name != "annotation" {
					continue
				}
				switch n, v := annot(a); n {
				case "jdk.jfr.Unsigned":
					bf.unsigned = true
				case "jdk.jfr.Timestamp":
					bf.stamp = binUnitNames[v]
				case "jdk.jfr.Timespan":
					bf.span = binUnitNames[v]
				}
			}
			t.fields = append(t.fields, bf)
		}
		if len(t.fields) == 0 {
			if p, ok := binPrimNames[t.name]; ok {
				t.prim = p
			} else {
				t.prim = primUnknown
			}
		}
	}
	state := map[*binType]uint8{} // 1: being decided, 2: decided
	var empty func(t *binType) bool
	empty = func(t *binType) bool {
		switch state[t] {
		case 1:
			return false // a type that contains itself is never skipped as empty
		case 2:
			return t.empty
		}
		state[t] = 1
		e := t.prim == primStruct
		for _, f := range t.fields {
			if f.array || f.cp || !empty(f.typ) {
				e = false
			}
		}
		t.empty, state[t] = e, 2
		return e
	}
	for _, t := range meta.types {
		empty(t)
	}
	return meta, nil
}

func idAttr(e *metaElement, k string) (int64, error) {
	s, ok := e.attr(k)
	if !ok {
		return 0, fmt.Errorf("<%s> without %q", e.name, k)
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("<%s %s=%.40q>: not an integer", e.name, k, s)
	}
	return id, nil
}
