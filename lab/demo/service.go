package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime/trace"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"
)

// upstreamTimeout bounds one upstream call, so a stuck upstream fails the
// request instead of hanging it.
const upstreamTimeout = 30 * time.Second

// Service is a running demo service: a warm connection pool, an upstream
// client and the calibrated CPU work.
type Service struct {
	cfg         Config
	cpuIters    int // hash iterations of the cpu segment
	sharedIters int // hash iterations of the shared section
	sql         string
	client      *http.Client
	pool        *pgxpool.Pool
	shared      sharedState
	metrics     *metrics
}

// New connects the pool (all PoolSize connections, opened before it returns),
// calibrates the CPU work unless cfg.CPUIters is set, and returns the service.
func New(ctx context.Context, cfg Config) (*Service, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.CPUIters <= 0 {
		cfg.CPUIters = calibrate()
	}
	pool, err := openPool(ctx, cfg.DBURL, cfg.PoolSize)
	if err != nil {
		return nil, err
	}
	return &Service{
		cfg:         cfg,
		cpuIters:    iterations(cfg.CPUIters, cfg.CPUWork),
		sharedIters: iterations(cfg.CPUIters, cfg.SharedWork),
		sql:         "SELECT pg_sleep(" + strconv.FormatFloat(cfg.DBSleep.Seconds(), 'f', -1, 64) + ")",
		client:      newUpstreamClient(cfg.UpstreamConns),
		pool:        pool,
		metrics:     newMetrics(cfg.Mode),
	}, nil
}

func (c Config) validate() error {
	switch {
	case c.Mode >= numModes:
		return fmt.Errorf("demo: invalid mode %d", uint8(c.Mode))
	case c.UpstreamURL == "":
		return errors.New("demo: no upstream URL (Config.UpstreamURL)")
	case c.DBURL == "":
		return errors.New("demo: no database URL (Config.DBURL)")
	}
	return nil
}

// openPool opens a pool of exactly size connections and opens them all now.
// Queries use the simple protocol: one round trip, one log line, and no
// statement cache to defeat when a per-request comment prefixes the SQL.
func openPool(ctx context.Context, url string, size int) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("demo: database URL: %w", err)
	}
	pc.MaxConns, pc.MinConns = int32(size), int32(size)
	pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("demo: database pool: %w", err)
	}
	if err := warm(ctx, pool, size); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// warm holds n connections at once, which makes the pool open all of them.
func warm(ctx context.Context, pool *pgxpool.Pool, n int) error {
	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range n {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("demo: open database connection %d of %d: %w", len(conns)+1, n, err)
		}
		conns = append(conns, c)
	}
	return nil
}

// newUpstreamClient returns a client of its own, keeping up to conns idle
// keep-alive connections to the upstream and never using a proxy.
func newUpstreamClient(conns int) *http.Client {
	return &http.Client{
		Timeout: upstreamTimeout,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

// CPUIters reports the SHA-256 iterations per millisecond of CPU in use,
// calibrated or given.
func (s *Service) CPUIters() int { return s.cfg.CPUIters }

// Config reports the configuration in use, defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// Close closes the pool and the upstream client's idle connections.
func (s *Service) Close() {
	s.pool.Close()
	s.client.CloseIdleConnections()
}

// Handler serves GET /work, /healthz, /metrics and /debug/pprof/.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", s.serveWork)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", s.metrics.handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// serveWork runs one request inside a trace task named "request". A failed
// segment answers 500 with the error's text.
func (s *Service) serveWork(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx, task := trace.NewTask(r.Context(), "request")
	defer task.End()
	trace.Log(ctx, "mode", s.cfg.Mode.String())
	code := http.StatusOK
	if err := s.work(ctx); err != nil {
		code = http.StatusInternalServerError
		http.Error(w, err.Error(), code)
	} else {
		fmt.Fprintln(w, "ok")
	}
	s.metrics.observe(code, time.Since(start))
}

// work runs the four segments in the configured shape.
func (s *Service) work(ctx context.Context) error {
	r := trace.StartRegion(ctx, "cpu")
	cpuWork(s.cpuIters)
	r.End()
	if err := s.waits(ctx); err != nil {
		return err
	}
	r = trace.StartRegion(ctx, "shared")
	sharedSection(&s.shared, s.sharedIters, s.cfg.Mode.fixedShared())
	r.End()
	return nil
}

// waits runs the upstream call and the query, one after the other or, when
// the mode overlaps them, on two goroutines at once.
func (s *Service) waits(ctx context.Context) error {
	if !s.cfg.Mode.overlaps() {
		if err := s.upstream(ctx); err != nil {
			return err
		}
		return s.db(ctx)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.upstream(gctx) })
	g.Go(func() error { return s.db(gctx) })
	return g.Wait()
}

// upstream is the upstream segment inside its region.
func (s *Service) upstream(ctx context.Context) error {
	defer trace.StartRegion(ctx, "upstream").End()
	return callUpstream(ctx, s.client, s.cfg.UpstreamURL)
}

// db is the db segment inside its region, with the optional per-request prefix.
func (s *Service) db(ctx context.Context) error {
	defer trace.StartRegion(ctx, "db").End()
	sql := s.sql
	if s.cfg.SQLPrefix != nil {
		sql = s.cfg.SQLPrefix(ctx) + sql
	}
	return queryDB(ctx, s.pool, sql)
}
