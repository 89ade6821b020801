package queues

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"

	"github.com/latscope/latscope/internal/atomicfile"
)

// ServeUsage is the synopsis of `latscope-lab queues-serve`.
const ServeUsage = "queues-serve --cores N --cpu D --db D --upstream D --pool N --rounds R [--addr HOST:PORT] [--addr-file FILE]"

// ServeConfig is one service process of the lab: the shape of a Case,
// with or without its upstream call.
type ServeConfig struct {
	Addr     string // listen address; port 0 picks one
	AddrFile string // written with the address once the service listens
	Cores    int    // GOMAXPROCS
	CPU      time.Duration
	DB       time.Duration
	Upstream time.Duration
	Pool     int
	Rounds   float64 // sha256 rounds per millisecond of CPU (calibrate)
}

// ServeMain parses args and serves until ctx ends: GET / is one request,
// GET /debug/pprof/trace?seconds=S records an execution trace of the
// process, as any Go service exposes it.
func ServeMain(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	cfg, err := parseServeFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "usage: latscope-lab %s\n", ServeUsage)
		return nil
	}
	if err != nil {
		return err
	}
	return Serve(ctx, cfg)
}

// DefaultServeConfig is where the flags start.
var DefaultServeConfig = ServeConfig{Addr: "127.0.0.1:0", Pool: 1}

// RegisterFlags adds the service's flags to fs.
func (cfg *ServeConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen `ADDRESS` (port 0 picks one)")
	fs.StringVar(&cfg.AddrFile, "addr-file", "", "write the listening address to `FILE` once ready")
	fs.IntVar(&cfg.Cores, "cores", 0, "GOMAXPROCS `N`")
	fs.DurationVar(&cfg.CPU, "cpu", 0, "CPU work per request (calibrated with --rounds)")
	fs.DurationVar(&cfg.DB, "db", 0, "query time under a pool connection")
	fs.DurationVar(&cfg.Upstream, "upstream", 0, "upstream call time (0: no upstream call)")
	fs.IntVar(&cfg.Pool, "pool", cfg.Pool, "pool connections `N`")
	fs.Float64Var(&cfg.Rounds, "rounds", 0, "sha256 rounds per millisecond of CPU on this machine (`R`)")
}

func parseServeFlags(args []string) (ServeConfig, error) {
	cfg := DefaultServeConfig
	fs := flag.NewFlagSet("queues-serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("queues-serve: %w", err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("queues-serve: unexpected argument %q", fs.Arg(0))
	}
	return cfg, cfg.Check()
}

// Check says what is wrong with cfg's values.
func (cfg ServeConfig) Check() error {
	switch {
	case cfg.Cores < 1 || cfg.Cores > 1024:
		return fmt.Errorf("queues-serve: --cores %d: want 1 to 1024", cfg.Cores)
	case cfg.Pool < 1:
		return fmt.Errorf("queues-serve: --pool %d: want at least 1 connection", cfg.Pool)
	case cfg.Rounds <= 0:
		return fmt.Errorf("queues-serve: --rounds %g: want a positive number", cfg.Rounds)
	case cfg.CPU < 0 || cfg.DB < 0 || cfg.Upstream < 0:
		return errors.New("queues-serve: --cpu, --db and --upstream want durations >= 0")
	}
	return nil
}

// args are the flags that start cfg's process.
func (cfg ServeConfig) args() []string {
	return []string{"queues-serve", "--cores", fmt.Sprint(cfg.Cores), "--cpu", cfg.CPU.String(),
		"--db", cfg.DB.String(), "--upstream", cfg.Upstream.String(), "--pool", fmt.Sprint(cfg.Pool),
		"--rounds", fmt.Sprint(cfg.Rounds)}
}

// Serve runs the service until ctx ends.
func Serve(ctx context.Context, cfg ServeConfig) error {
	runtime.GOMAXPROCS(cfg.Cores)
	s := newService(cfg.CPU, cfg.DB, cfg.Upstream, cfg.Pool, cfg.Rounds)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		s.handle(r.Context())
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("queues-serve: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if cfg.AddrFile != "" {
		if err := atomicfile.WriteString(cfg.AddrFile, ln.Addr().String()); err != nil {
			ln.Close()
			return fmt.Errorf("queues-serve: %w", err)
		}
	}
	go func() {
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(c)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("queues-serve: %w", err)
	}
	return nil
}
