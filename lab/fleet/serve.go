package fleet

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/agentpgx"
	_ "github.com/latscope/latscope/agent/agentprom" // Options.Metrics takes the registry
	"github.com/latscope/latscope/internal/atomicfile"
	"github.com/latscope/latscope/internal/opterr"
	"github.com/latscope/latscope/lab"
)

// Names the service and the scenario share.
const (
	Table     = "fleet_items" // looked up by primary key
	Rows      = 10000         // rows in Table
	RouteDB   = "GET /db"     // one query against the shared database
	RouteNoDB = "GET /nodb"   // no query: a little CPU only
	// RouteQuote calls the upstream (ServeConfig.Upstream) through the
	// agent's transport, with no query: a dependency that is not the
	// database.
	RouteQuote = "GET /quote"
)

// ServeUsage is the synopsis of `latscope-lab fleet-serve`.
const ServeUsage = "fleet-serve --db-url URL [--pool 8] [--nodb-work 200us] [--nodb-wait 100ms] [--upstream URL] [--addr ADDR] [--addr-file FILE]"

// ServeConfig configures one instance of the fleet's service.
type ServeConfig struct {
	DBURL    string        // PostgreSQL URL or DSN (required)
	Addr     string        // HTTP listen address; "" = 127.0.0.1:0
	AddrFile string        // where to write the address once ready; "" = none
	Pool     int           // connections to the database
	NoDBWork time.Duration // CPU computed by a request of RouteNoDB
	// NoDBWait is how long a request of RouteNoDB then waits, as a call to
	// an upstream would: requests in flight are what a stall delays.
	NoDBWait time.Duration
	// Upstream is the URL RouteQuote calls through agent.Transport ("":
	// no RouteQuote).
	Upstream string
}

// DefaultServeConfig holds the defaults.
var DefaultServeConfig = ServeConfig{Addr: "127.0.0.1:0", Pool: 8, NoDBWork: 200 * time.Microsecond, NoDBWait: 100 * time.Millisecond}

// RegisterFlags defines the flags of `latscope-lab fleet-serve` on fs,
// with c's values as defaults.
func (c *ServeConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DBURL, "db-url", c.DBURL, "PostgreSQL `URL` or DSN (required)")
	fs.StringVar(&c.Addr, "addr", c.Addr, "HTTP listen `ADDR` (/db, /nodb, /metrics, POST /burn, POST /alloc)")
	fs.StringVar(&c.AddrFile, "addr-file", c.AddrFile, "write the address to `FILE` once ready")
	fs.IntVar(&c.Pool, "pool", c.Pool, "connections (`N`) to the database")
	fs.DurationVar(&c.NoDBWork, "nodb-work", c.NoDBWork, "CPU computed by a request of /nodb")
	fs.DurationVar(&c.NoDBWait, "nodb-wait", c.NoDBWait, "then a wait, as for an upstream, by a request of /nodb")
	fs.StringVar(&c.Upstream, "upstream", c.Upstream, "serve GET /quote, which calls this `URL` through the agent's transport (an outbound dependency)")
}

// Check validates a parsed configuration.
func (c ServeConfig) Check() error {
	switch {
	case c.DBURL == "":
		return opterr.Wrap("db-url", errors.New("is required"))
	case c.Pool < 1:
		return opterr.Wrap("pool", fmt.Errorf("%d: want at least 1 connection", c.Pool))
	case c.NoDBWork < 0:
		return opterr.Wrap("nodb-work", fmt.Errorf("%v: want a duration >= 0", c.NoDBWork))
	case c.NoDBWait < 0:
		return opterr.Wrap("nodb-wait", fmt.Errorf("%v: want a duration >= 0", c.NoDBWait))
	case c.Upstream != "" && !strings.HasPrefix(c.Upstream, "http://") && !strings.HasPrefix(c.Upstream, "https://"):
		return opterr.Wrap("upstream", fmt.Errorf("%q: want an http:// or https:// URL", c.Upstream))
	}
	return nil
}

// instance is one running service.
type instance struct {
	cfg  ServeConfig
	pool *pgxpool.Pool
	// stray holds extra waits for the next requests of RouteNoDB (POST
	// /stray): a slow request now and then, with no fault of the process.
	stray chan time.Duration
	// client calls the upstream through the agent's transport.
	client *http.Client
}

// Serve runs one instance until ctx is done: a pgx pool traced by the
// agent (agentpgx), the agent with its metrics on a registry of its own
// (no flight recorder), the routes RouteDB and RouteNoDB through the
// agent's Handler, /metrics, and POST /burn (a burst of CPU work, the
// periodic job of the throttling phase). It writes AddrFile once ready.
func Serve(ctx context.Context, cfg ServeConfig, stdout io.Writer) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultServeConfig.Addr
	}
	pc, err := pgxpool.ParseConfig(cfg.DBURL)
	if err != nil {
		return opterr.Wrap("db-url", fmt.Errorf("is not a PostgreSQL URL: %w", err))
	}
	pc.MaxConns, pc.MinConns = int32(cfg.Pool), int32(cfg.Pool)
	pc.ConnConfig.Tracer = agentpgx.QueryTracer{}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("fleet-serve: connect: %w", err)
	}
	defer pool.Close()
	in := &instance{cfg: cfg, pool: pool, stray: make(chan time.Duration, 16),
		client: &http.Client{Transport: agent.Transport(nil), Timeout: 30 * time.Second}}
	if err := in.lookup(ctx, 1); err != nil {
		return fmt.Errorf("fleet-serve: first lookup in %s: %w (does the table exist?)", Table, err)
	}
	reg := prometheus.NewRegistry()
	ag, err := agent.New(agent.Options{NoRecorder: true, Metrics: reg})
	if err != nil {
		return fmt.Errorf("fleet-serve: agent: %w", err)
	}
	defer ag.Close()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return opterr.Wrap("addr", fmt.Errorf("%s: %w", cfg.Addr, err))
	}
	srv := &http.Server{Handler: in.mux(ag, reg), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	if cfg.AddrFile != "" {
		if err := atomicfile.WriteString(cfg.AddrFile, ln.Addr().String()+"\n"); err != nil {
			return opterr.Wrap("addr-file", fmt.Errorf("%s: %w", cfg.AddrFile, err))
		}
	}
	fmt.Fprintf(stdout, "fleet-serve: listening on http://%s (%s, %s, /metrics, POST /burn, POST /alloc, POST /stray), %d connections\n", ln.Addr(), RouteDB, RouteNoDB, cfg.Pool)
	<-ctx.Done()
	return nil
}

// mux routes the service's requests: the two application routes through
// the agent, the rest beside it.
func (in *instance) mux(ag *agent.Agent, reg *prometheus.Registry) *http.ServeMux {
	app := http.NewServeMux()
	app.HandleFunc(RouteDB, in.serveDB)
	app.HandleFunc(RouteNoDB, in.serveNoDB)
	if in.cfg.Upstream != "" {
		app.HandleFunc(RouteQuote, in.serveQuote)
	}
	m := http.NewServeMux()
	m.Handle("/", ag.Handler(app))
	m.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m.HandleFunc("POST /burn", serveBurn)
	m.HandleFunc("POST /alloc", serveAlloc)
	m.HandleFunc("POST /stray", in.serveStray)
	return m
}

// serveStray makes the next request of RouteNoDB wait ?for=DURATION
// longer: one slow request, the process as fast as ever.
func (in *instance) serveStray(w http.ResponseWriter, r *http.Request) {
	d, err := time.ParseDuration(r.FormValue("for"))
	if err != nil || d <= 0 || d > time.Minute {
		http.Error(w, "for: want a duration in (0, 1m]", http.StatusBadRequest)
		return
	}
	select {
	case in.stray <- d:
		w.WriteHeader(http.StatusAccepted)
	default:
		http.Error(w, "too many strays pending", http.StatusServiceUnavailable)
	}
}

func (in *instance) serveDB(w http.ResponseWriter, r *http.Request) {
	if err := in.lookup(r.Context(), 1+mrand.IntN(Rows)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	io.WriteString(w, "ok\n")
}

func (in *instance) serveNoDB(w http.ResponseWriter, r *http.Request) {
	spin(in.cfg.NoDBWork)
	wait := in.cfg.NoDBWait
	select {
	case d := <-in.stray:
		wait += d
	default:
	}
	lab.Sleep(r.Context(), wait)
	io.WriteString(w, "ok\n")
}

// serveQuote calls the upstream once, through the agent's transport (its
// time is the request's latscope_request_outbound_seconds), and no
// database.
func (in *instance) serveQuote(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, in.cfg.Upstream, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp, err := in.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	io.WriteString(w, "ok\n")
}

// lookup reads one row by primary key.
func (in *instance) lookup(ctx context.Context, id int) error {
	var val string
	return in.pool.QueryRow(ctx, "SELECT val FROM "+Table+" WHERE id = $1", id).Scan(&val)
}

// workParams reads a work request's ?for=DURATION (in (0, 1m]) and
// ?goroutines=N (1..64); on a bad one it answers 400 and reports false.
func workParams(w http.ResponseWriter, r *http.Request) (time.Duration, int, bool) {
	d, err := time.ParseDuration(r.FormValue("for"))
	if err != nil || d <= 0 || d > time.Minute {
		http.Error(w, "for: want a duration in (0, 1m]", http.StatusBadRequest)
		return 0, 0, false
	}
	n, err := strconv.Atoi(r.FormValue("goroutines"))
	if err != nil || n < 1 || n > 64 {
		http.Error(w, "goroutines: want 1..64", http.StatusBadRequest)
		return 0, 0, false
	}
	return d, n, true
}

// serveBurn starts a burst of CPU work: ?goroutines=N each spin for
// ?for=DURATION. It answers 202 at once; the work runs on after it.
func serveBurn(w http.ResponseWriter, r *http.Request) {
	d, n, ok := workParams(w, r)
	if !ok {
		return
	}
	burn(d, n)
	w.WriteHeader(http.StatusAccepted)
}

// serveAlloc starts an allocation loop: ?goroutines=N each allocate for
// ?for=DURATION, replacing nodes of a live heap of pointers (allocLive
// nodes), so that the garbage collector marks a large heap often and
// takes the process's CPU from its requests (issue #35: a GC-bound
// instance). It answers 202 at once; the loop runs on after it.
func serveAlloc(w http.ResponseWriter, r *http.Request) {
	d, n, ok := workParams(w, r)
	if !ok {
		return
	}
	for range n {
		go allocLoop(d)
	}
	w.WriteHeader(http.StatusAccepted)
}

// allocLive is the number of nodes an allocation loop keeps alive (about
// 15 MB of small objects, each pointing at its buffer).
const allocLive = 1 << 18

// allocNode is one object of the allocation loop's live heap.
type allocNode struct {
	buf []byte
}

// allocLoop allocates for about d of wall time: each new node (and its
// 16-byte buffer) replaces one of allocLive live ones, so the heap stays
// the same size and every collection marks all of it.
func allocLoop(d time.Duration) {
	live := make([]*allocNode, allocLive)
	for i := range live {
		live[i] = &allocNode{buf: make([]byte, 16)}
	}
	for end, k := time.Now().Add(d), 0; time.Now().Before(end); {
		for range 1024 {
			k = (k*1103515245 + 12345) & (allocLive - 1)
			live[k] = &allocNode{buf: make([]byte, 16)}
		}
	}
}

// burn spins n goroutines for d each, in the background.
func burn(d time.Duration, n int) {
	for range n {
		go spin(d)
	}
}

// spin computes for about d of wall time.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	var sum [32]byte
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 4 {
			sum = sha256.Sum256(sum[:])
		}
	}
}

// createTable creates Table in the shared database and fills it.
func createTable(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id int PRIMARY KEY, val text NOT NULL);
		INSERT INTO %[1]s SELECT g, md5(g::text) FROM generate_series(1, %d) g; ANALYZE %[1]s`, Table, Rows))
	if err != nil {
		return fmt.Errorf("postgres: create %s: %w", Table, err)
	}
	return nil
}
