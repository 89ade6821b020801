package burst

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures a Service. Zero fields take DefaultConfig's values,
// except Workers, whose zero means the mode's default.
type Config struct {
	Mode  Mode
	Procs int           // GOMAXPROCS that Serve sets (the Service itself does not)
	Batch int           // events per batch
	Every time.Duration // between batches
	Work  int           // SHA-256 rounds per event
	// Workers is the pool width: GOMAXPROCS for Pool, 2 for Fixed; unused
	// by Spawn.
	Workers int
}

// DefaultConfig is the scheduler case's shape (docs/method.md §10) on this
// lab's scale: a batch every
// 100 ms, GOMAXPROCS 32, about a microsecond of hashing per event.
var DefaultConfig = Config{Mode: Spawn, Procs: 32, Batch: 20000, Every: 100 * time.Millisecond, Work: 10}

// FixedWorkers is the default width of the Fixed pool (in the scheduler
// case the pool went from 32 threads to 2: docs/method.md §10).
const FixedWorkers = 2

func (c Config) withDefaults() Config {
	d := DefaultConfig
	if c.Procs <= 0 {
		c.Procs = d.Procs
	}
	if c.Batch <= 0 {
		c.Batch = d.Batch
	}
	if c.Every <= 0 {
		c.Every = d.Every
	}
	if c.Work <= 0 {
		c.Work = d.Work
	}
	if c.Workers <= 0 {
		switch c.Mode {
		case Pool:
			c.Workers = c.Procs
		case Fixed:
			c.Workers = FixedWorkers
		}
	}
	return c
}

// Validate checks the fields that have no default.
func (c Config) Validate() error {
	switch {
	case c.Mode > Fixed:
		return fmt.Errorf("mode %d: want spawn, pool or fixed", c.Mode)
	case c.Procs < 0 || c.Procs > 1024:
		return fmt.Errorf("procs %d: want 0 (default) to 1024", c.Procs)
	case c.Batch < 0 || c.Batch > 1_000_000:
		return fmt.Errorf("batch %d: want 0 (default) to 1000000", c.Batch)
	case c.Every < 0:
		return fmt.Errorf("every %v: want a positive interval", c.Every)
	case c.Work < 0 || c.Work > 1_000_000:
		return fmt.Errorf("work %d: want 0 (default) to 1000000 rounds", c.Work)
	case c.Workers < 0 || c.Workers > 100_000:
		return fmt.Errorf("workers %d: want 0 (mode's default) to 100000", c.Workers)
	}
	return nil
}

// Event is one unit of work.
type Event struct {
	ID      uint64
	Payload [32]byte
}

// Service receives batches and processes their events.
type Service struct {
	cfg       Config
	queue     chan Event
	workers   sync.WaitGroup
	inflight  sync.WaitGroup // events delivered and not yet processed
	events    atomic.Uint64  // processed
	batches   atomic.Uint64  // delivered
	zeros     atomic.Uint64  // digests starting with a zero byte: keeps the work observable
	closeOnce sync.Once
}

// New returns a Service and starts its workers (Pool, Fixed).
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Service{cfg: cfg}
	switch cfg.Mode {
	case Pool:
		s.queue = make(chan Event)
	case Fixed:
		s.queue = make(chan Event, cfg.Batch)
	}
	for range cfg.Workers {
		if s.queue == nil {
			break
		}
		s.workers.Add(1)
		go s.worker()
	}
	return s, nil
}

// Config returns the configuration in effect.
func (s *Service) Config() Config { return s.cfg }

//go:noinline
func (s *Service) worker() {
	defer s.workers.Done()
	for ev := range s.queue {
		s.handle(ev)
	}
}

// handle processes one event: Work rounds of SHA-256 over its payload.
//
//go:noinline
func (s *Service) handle(ev Event) {
	b := ev.Payload
	for range s.cfg.Work {
		b = sha256.Sum256(b[:])
	}
	if b[0] == 0 {
		s.zeros.Add(1)
	}
	s.events.Add(1)
	s.inflight.Done()
}

// Deliver fans a batch out as the mode says. It returns when every event
// has been handed over (Pool, Fixed) or its goroutine created (Spawn), not
// when they are done. It must not be called after Close.
//
//go:noinline
func (s *Service) Deliver(batch []Event) {
	s.batches.Add(1)
	s.inflight.Add(len(batch))
	if s.queue == nil {
		for _, ev := range batch {
			go s.handle(ev)
		}
		return
	}
	for _, ev := range batch {
		s.queue <- ev
	}
}

// Run delivers a batch every Every until ctx is done: the source of the
// bursts. It waits for a batch to be processed before it delivers the next,
// so a variant that cannot keep up runs fewer batches instead of piling up
// goroutines (the ticker drops the ticks it misses).
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Every)
	defer t.Stop()
	batch := make([]Event, s.cfg.Batch)
	var id uint64
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for i := range batch {
			id++
			batch[i].ID = id
			binary.LittleEndian.PutUint64(batch[i].Payload[:], id)
		}
		s.Deliver(batch)
		s.inflight.Wait()
	}
}

// Close stops the workers after the events already queued. Run must have
// returned.
func (s *Service) Close() {
	s.closeOnce.Do(func() {
		if s.queue != nil {
			close(s.queue)
		}
		s.workers.Wait()
	})
}

// Stats are the Service's counters.
type Stats struct {
	Mode       Mode          `json:"mode"`
	GOMAXPROCS int           `json:"gomaxprocs"`
	Workers    int           `json:"workers"`
	Batch      int           `json:"batch"`
	Every      time.Duration `json:"every_ns"`
	Work       int           `json:"work"`
	Events     uint64        `json:"events"`  // processed
	Batches    uint64        `json:"batches"` // delivered
}

// Stats returns the counters now.
func (s *Service) Stats() Stats {
	return Stats{
		Mode: s.cfg.Mode, GOMAXPROCS: runtime.GOMAXPROCS(0), Workers: s.cfg.Workers,
		Batch: s.cfg.Batch, Every: s.cfg.Every, Work: s.cfg.Work,
		Events: s.events.Load(), Batches: s.batches.Load(),
	}
}

// ErrBusy is returned when a profile or trace is already being taken.
var ErrBusy = errors.New("a profile or trace is already running")
