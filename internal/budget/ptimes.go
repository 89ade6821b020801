package budget

import "github.com/latscope/latscope/internal/tracein"

// densePs is how many P IDs pTimes keeps in its slice; the runtime numbers
// Ps from 0 to GOMAXPROCS−1, so larger IDs (only a damaged or crafted
// trace has them) go to a map.
const densePs = 4096

// pTimes holds a time per P — when it started running, when its
// goroutine entered a system call — without a map lookup per event: the
// analyzer consults it on every system call's transitions.
type pTimes struct {
	at    []tracein.Time
	set   []bool
	large map[int64]tracein.Time
}

// get returns P id's time, if it has one.
func (p *pTimes) get(id int64) (tracein.Time, bool) {
	if id >= 0 && id < int64(len(p.set)) {
		return p.at[id], p.set[id]
	}
	t, ok := p.large[id]
	return t, ok
}

// put sets P id's time to t.
func (p *pTimes) put(id int64, t tracein.Time) {
	if id < 0 || id >= densePs {
		if p.large == nil {
			p.large = map[int64]tracein.Time{}
		}
		p.large[id] = t
		return
	}
	for int64(len(p.set)) <= id {
		p.at, p.set = append(p.at, 0), append(p.set, false)
	}
	p.at[id], p.set[id] = t, true
}

// take removes P id's time and returns it, if it had one.
func (p *pTimes) take(id int64) (tracein.Time, bool) {
	if id >= 0 && id < int64(len(p.set)) {
		if !p.set[id] {
			return 0, false
		}
		p.set[id] = false
		return p.at[id], true
	}
	t, ok := p.large[id]
	delete(p.large, id)
	return t, ok
}

// since is Σ (t − time) over the Ps that have one.
func (p *pTimes) since(t tracein.Time) int64 {
	var sum int64
	for i, ok := range p.set {
		if ok {
			sum += int64(t - p.at[i])
		}
	}
	for _, at := range p.large {
		sum += int64(t - at)
	}
	return sum
}
