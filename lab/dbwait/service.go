package dbwait

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/trace"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/internal/hostsig/probe"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/tracelog"
)

// Names the service and the scenario share.
const (
	Table       = "dbwait_items"     // looked up by primary key
	Rows        = 10000              // rows in Table
	TaskType    = "lookup"           // the task of one lookup
	SQLRegion   = tracelog.SQLRegion // the region of one statement
	SQLCategory = tracelog.SQL       // its traceparent log
)

// ServeConfig configures the service.
type ServeConfig struct {
	DBURL          string        // PostgreSQL URL or DSN (required)
	Addr           string        // HTTP listen address for /debug/pprof and /stats; "" = 127.0.0.1:0
	AddrFile       string        // where to write the address once ready; "" = none
	Interval       time.Duration // between lookups; 0 = DefaultServeConfig.Interval
	SampleInterval time.Duration // between host samples; 0 = hostsig.DefaultInterval
	// CPUWork is CPU computed alongside each lookup, while its statement
	// is in flight, by CPUFanout goroutines (each CPUWork/CPUFanout); 0 = none.
	CPUWork   time.Duration
	CPUFanout int
}

// DefaultServeConfig holds the defaults: the seed's 20 ms lookups and
// 100 ms host samples.
var DefaultServeConfig = ServeConfig{Addr: "127.0.0.1:0", Interval: 20 * time.Millisecond, SampleInterval: hostsig.DefaultInterval, CPUFanout: 2}

// Stats are the service's counters, served as JSON on /stats.
type Stats struct {
	Lookups int64  `json:"lookups"`
	Errors  int64  `json:"errors"`
	LastErr string `json:"last_error,omitempty"`
}

// service is the running service.
type service struct {
	cfg           ServeConfig
	conn          *pgx.Conn
	lookups, errs atomic.Int64
	lastErr       atomic.Value // string
}

// Serve runs the service until ctx is done: it connects, checks that the
// table answers, listens, writes AddrFile, and then looks up a random row
// every Interval while logging host samples into the execution trace
// (recorded by whoever fetches /debug/pprof/trace).
func Serve(ctx context.Context, cfg ServeConfig, stdout io.Writer) error {
	cfg = cfg.withDefaults()
	if cfg.DBURL == "" {
		return opterr.Wrap("db-url", errors.New("is required"))
	}
	pc, err := pgx.ParseConfig(cfg.DBURL)
	if err != nil {
		return opterr.Wrap("db-url", fmt.Errorf("is not a PostgreSQL URL: %w", err))
	}
	// A per-statement comment makes every SQL text unique: the simple
	// protocol keeps pgx from preparing (and caching) each one.
	pc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("dbwait-serve: connect: %w", err)
	}
	defer conn.Close(context.Background())
	s := &service{cfg: cfg, conn: conn}
	if err := s.lookup(ctx, 1); err != nil {
		return fmt.Errorf("dbwait-serve: first lookup in %s: %w (does the table exist?)", Table, err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return opterr.Wrap("addr", fmt.Errorf("%s: %w", cfg.Addr, err))
	}
	srv := &http.Server{Handler: s.mux(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	sampler, err := hostsig.NewSampler(os.Getpid(), hostsig.Options{Interval: cfg.SampleInterval})
	if err != nil {
		return fmt.Errorf("dbwait-serve: %w", err)
	}
	sctx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() { defer close(sampled); sampler.Run(sctx, logSample) }()
	probed := make(chan struct{}) // the agent's CPU-availability probe, as a service with the agent has
	go func() { defer close(probed); probe.Run(sctx, tracelog.ProbeEvery, tracelog.ProbeLate) }()
	defer func() { <-probed }()
	defer func() { stopSampling(); <-sampled; sampler.Close() }() // never close under a running Sample
	if cfg.AddrFile != "" {
		if err := atomicfile.WriteString(cfg.AddrFile, ln.Addr().String()+"\n"); err != nil {
			return opterr.Wrap("addr-file", fmt.Errorf("%s: %w", cfg.AddrFile, err))
		}
	}
	fmt.Fprintf(stdout, "dbwait-serve: listening on http://%s, a lookup every %v with %v of CPU on %d goroutines, host samples every %v\n",
		ln.Addr(), cfg.Interval, cfg.CPUWork, cfg.CPUFanout, cfg.SampleInterval)
	s.loop(ctx)
	return nil
}

func (c ServeConfig) withDefaults() ServeConfig {
	d := DefaultServeConfig
	if c.Addr == "" {
		c.Addr = d.Addr
	}
	if c.Interval <= 0 {
		c.Interval = d.Interval
	}
	if c.SampleInterval <= 0 {
		c.SampleInterval = d.SampleInterval
	}
	if c.CPUFanout <= 0 {
		c.CPUFanout = d.CPUFanout
	}
	return c
}

// logSample writes a host sample into the execution trace.
func logSample(s hostsig.Sample) {
	if !trace.IsEnabled() {
		return
	}
	text, err := s.MarshalText()
	if err == nil {
		trace.Log(context.Background(), hostsig.LogCategory, string(text))
	}
}

// loop looks up a random row every Interval until ctx is done. Ticks
// missed while a lookup waits are dropped, as with any ticker.
func (s *service) loop(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.lookup(ctx, 1+mrand.IntN(Rows)); err != nil && ctx.Err() == nil {
			s.errs.Add(1)
			s.lastErr.Store(err.Error())
		}
	}
}

// lookup is one request: a task with one statement in a region, its
// traceparent logged inside the region and sent in the SQL comment, and
// the request's CPU work running meanwhile.
func (s *service) lookup(ctx context.Context, id int) error {
	ctx, task := trace.NewTask(ctx, TaskType)
	defer task.End()
	tp := newTraceParent()
	defer work(s.cfg.CPUWork, s.cfg.CPUFanout)()
	region := trace.StartRegion(ctx, SQLRegion)
	trace.Log(ctx, SQLCategory, tp.String())
	var val string
	err := s.conn.QueryRow(ctx, pglog.Comment(tp)+" SELECT val FROM "+Table+" WHERE id = $1", id).Scan(&val)
	region.End()
	if err == nil {
		s.lookups.Add(1)
	}
	return err
}

// newTraceParent makes a random, sampled traceparent.
func newTraceParent() pglog.TraceParent {
	tp := pglog.TraceParent{Flags: 1}
	rand.Read(tp.TraceID[:])
	rand.Read(tp.SpanID[:])
	tp.TraceID[0] |= 1 // never all zero
	tp.SpanID[0] |= 1
	return tp
}

func (s *service) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	m.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		st := Stats{Lookups: s.lookups.Load(), Errors: s.errs.Load()}
		st.LastErr, _ = s.lastErr.Load().(string)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(st)
	})
	return m
}
