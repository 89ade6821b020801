package fleet

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/latscope/latscope/internal/loadgen"
	"github.com/latscope/latscope/internal/units"
)

// sample is one request the load sent.
type sample struct {
	end    time.Time
	lat    time.Duration
	failed bool
}

// stream is one closed-model run: one route of one instance.
type stream struct {
	addr, route string
	samples     []sample // appended by the run's out function only
	err         error
}

// load is the closed-model load on every instance: one loadgen run per
// instance and route, all in the background until stop.
type load struct {
	streams []*stream
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// startLoad starts the load on every address for at most d.
func startLoad(ctx context.Context, addrs []string, c Config, d time.Duration) *load {
	ctx, cancel := context.WithCancel(ctx)
	l := &load{cancel: cancel}
	for _, a := range addrs {
		for _, r := range []struct {
			path    string
			clients int
		}{{"/db", c.DBClients}, {"/nodb", c.NoDBClients}, {"/quote", c.QuoteClients}} {
			if r.clients == 0 {
				continue
			}
			s := &stream{addr: a, route: r.path}
			l.streams = append(l.streams, s)
			o := loadgen.DefaultOptions
			o.URL, o.Clients, o.Duration, o.Warmup, o.Timeout = "http://"+a+r.path, r.clients, d, 0, 30*time.Second
			o.Pacer = thinkPacer(c.Think)
			l.wg.Go(func() {
				s.err = loadgen.Run(ctx, o, func(res loadgen.Result) {
					s.samples = append(s.samples, sample{end: res.End(), lat: res.Latency, failed: res.Error != ""})
				})
			})
		}
	}
	return l
}

// thinkPacer is a closed-model pacer whose clients think a random,
// exponentially distributed time of mean think, and send their first
// request at a uniform random offset within think. Clients with a fixed
// think time that start together stay in step: all of them in flight at
// once, then all of them thinking, so that whether a stall catches any
// request in flight would be a coin toss; users arrive on their own.
func thinkPacer(think time.Duration) loadgen.Pacer {
	return loadgen.PacerFunc(func(n uint64, last time.Duration) time.Duration {
		if n == 0 {
			return time.Duration(rand.Int64N(int64(think) + 1))
		}
		return last + time.Duration(rand.ExpFloat64()*float64(think))
	})
}

// stop ends the load and waits for it; an error is a run that failed for
// another reason than being stopped.
func (l *load) stop() error {
	l.cancel()
	l.wg.Wait()
	var errs []error
	for _, s := range l.streams {
		if s.err != nil && !errors.Is(s.err, context.Canceled) {
			errs = append(errs, s.err)
		}
	}
	return errors.Join(errs...)
}

// stats is what the load saw of each instance between from and to (by
// completion time). Call it after stop.
func (l *load) stats(addrs []string, from, to time.Time) []LoadStats {
	out := make([]LoadStats, 0, len(addrs))
	for _, a := range addrs {
		ls := LoadStats{Instance: a}
		for _, s := range l.streams {
			if s.addr != a {
				continue
			}
			var lats []time.Duration
			for _, x := range s.samples {
				if x.end.Before(from) || !x.end.Before(to) {
					continue
				}
				ls.Requests++
				if x.failed {
					ls.Errors++
				}
				lats = append(lats, x.lat)
			}
			slices.Sort(lats)
			p95 := units.Ms(loadgen.Percentile(lats, 95))
			switch s.route {
			case "/db":
				ls.DBP95Ms = p95
			case "/nodb":
				ls.NoDBP95Ms = p95
			}
		}
		out = append(out, ls)
	}
	return out
}
