package dbwait

import (
	"sort"
	"time"

	"github.com/latscope/latscope/internal/tracein"
)

// busyList records when every P of the process ran a goroutine: the
// process's CPU was all taken by its own work. A goroutine woken then by
// the network poller, or by a timer, waits until some P schedules — the
// poller is only polled between goroutines (or by sysmon every 10 ms) — and
// the trace shows it neither runnable nor running meanwhile: still
// waiting, as if the network were slow.
type busyList struct {
	running map[tracein.GoID]bool // goroutines in state Running
	procs   int                   // Ps seen: the largest P ID + 1
	since   tracein.Time          // when the current busy stretch began
	busy    bool
	spans   []gap
}

// add takes the next goroutine state transition (or any event, for its P).
func (b *busyList) add(ev *tracein.Event) {
	if ev.Proc >= 0 {
		b.procs = max(b.procs, int(ev.Proc)+1)
	}
	if ev.Kind != tracein.KindGoState {
		return
	}
	if b.running == nil {
		b.running = map[tracein.GoID]bool{}
	}
	if ev.To == tracein.Running {
		b.running[ev.G] = true
	} else {
		delete(b.running, ev.G)
	}
	now := b.procs > 0 && len(b.running) >= b.procs
	switch {
	case now && !b.busy:
		b.since, b.busy = ev.Time, true
	case !now && b.busy:
		b.busy = false
		if ev.Time > b.since {
			b.spans = append(b.spans, gap{b.since, ev.Time})
		}
	}
}

// tailIn returns how much of iv the busy stretch that ended as iv ended
// covered: the last one ending at or after iv.to − slack (a P came free
// and took the waiting goroutine). Only it can have held the answer: a
// busy stretch that ended earlier left a P free to poll while the
// goroutine still waited.
func (b *busyList) tailIn(iv gap, slack time.Duration) time.Duration {
	i := sort.Search(len(b.spans), func(i int) bool { return b.spans[i].to >= iv.to-tracein.Time(slack) })
	if i == len(b.spans) || b.spans[i].from >= iv.to {
		if b.busy && b.since < iv.to { // still busy at the trace's end
			return overlap(gap{b.since, iv.to}, iv)
		}
		return 0
	}
	return overlap(b.spans[i], iv)
}
