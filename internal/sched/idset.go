package sched

// idSet is a set of IDs (threads, Ps) that a trace names over and over: a
// map, fronted by a few slots that say an ID is already in it, so that a
// record of a thread or P seen before costs no hashing.
type idSet struct {
	m      map[int64]struct{}
	recent [16]int64 // an ID in m, by its low bits; noID: none
}

// noID is an ID no record has (they are ≥ 0, or -1 for none).
const noID = -1 << 63

func newIDSet() idSet {
	s := idSet{m: map[int64]struct{}{}}
	for i := range s.recent {
		s.recent[i] = noID
	}
	return s
}

// add adds id.
func (s *idSet) add(id int64) {
	r := &s.recent[uint64(id)%uint64(len(s.recent))]
	if *r == id {
		return
	}
	s.m[id] = struct{}{}
	*r = id
}

// len returns the number of IDs.
func (s *idSet) len() int { return len(s.m) }
