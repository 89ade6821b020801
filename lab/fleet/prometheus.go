package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/latscope/latscope/internal/pgcluster/proclife"
	"github.com/latscope/latscope/lab"
)

// PrometheusBin is where the Debian package puts the server.
const PrometheusBin = "/usr/bin/prometheus"

// ErrNoPrometheus says that the Prometheus server binary is missing.
var ErrNoPrometheus = errors.New("no Prometheus server (install the Debian package prometheus, or set PromOptions.Bin)")

// promDirPrefix starts the name of every private Prometheus directory
// under os.TempDir; SweepPrometheus removes those whose owner is gone.
const promDirPrefix = "latscope-prometheus-"

// ownerFile in a private Prometheus directory names the lab process.
const ownerFile = "owner"

// PromOptions configures a private Prometheus.
type PromOptions struct {
	Bin            string        // the server binary; "" = PrometheusBin
	Job            string        // the scrape job of Targets
	Targets        []string      // host:port of each instance (/metrics)
	ScrapeInterval time.Duration // also the scrape timeout; 0 = 1s
	Log            io.Writer     // receives the server's output; nil = kept in its directory only
}

// Prometheus is a private Prometheus server: its own data directory under
// os.TempDir, a generated configuration, a free 127.0.0.1 port. Stop kills
// it and removes the directory; the kernel kills it if the lab dies
// (lab.StartChild), and SweepPrometheus removes what a killed lab left.
type Prometheus struct {
	URL  string // http://127.0.0.1:PORT
	Dir  string // config, data and log
	cmd  *exec.Cmd
	done chan error
	log  *os.File
	once sync.Once
	err  error // of Stop
}

// FindPrometheus returns the server binary to run, or ErrNoPrometheus.
func FindPrometheus(bin string) (string, error) {
	if bin == "" {
		bin = PrometheusBin
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("%s: %w", bin, ErrNoPrometheus)
	}
	return path, nil
}

// StartPrometheus writes the configuration, starts the server and waits
// until /-/ready answers 200 (at most 60 s). A port taken between the pick
// and the server's bind is retried with another.
func StartPrometheus(ctx context.Context, o PromOptions) (*Prometheus, error) {
	bin, err := FindPrometheus(o.Bin)
	if err != nil {
		return nil, err
	}
	if o.ScrapeInterval <= 0 {
		o.ScrapeInterval = time.Second
	}
	SweepPrometheus()
	dir, err := os.MkdirTemp("", promDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	if err := proclife.WriteOwner(filepath.Join(dir, ownerFile)); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promConfig(o)), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	for try := 0; ; try++ {
		p, err := startPromOnce(ctx, bin, dir, o.Log)
		if err == nil {
			return p, nil
		}
		if try < 3 && strings.Contains(err.Error(), "address already in use") {
			continue
		}
		os.RemoveAll(dir)
		return nil, err
	}
}

// promConfig is the generated prometheus.yml: one job, static targets,
// the scrape interval as the scrape timeout too (a stopped instance is
// down for that scrape, not waited for).
func promConfig(o PromOptions) string {
	var b strings.Builder
	iv := o.ScrapeInterval.String()
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n", iv, iv, iv)
	fmt.Fprintf(&b, "scrape_configs:\n  - job_name: %q\n    static_configs:\n      - targets:\n", o.Job)
	for _, t := range o.Targets {
		fmt.Fprintf(&b, "          - %q\n", t)
	}
	return b.String()
}

// startPromOnce starts the server on a free port and waits until it is
// ready.
func startPromOnce(ctx context.Context, bin, dir string, logw io.Writer) (*Prometheus, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("prometheus: free port: %w", err)
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--storage.tsdb.retention.time=1d",
		"--web.listen-address="+addr,
		"--log.level=warn")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if logw != nil {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(logf, logw), io.MultiWriter(logf, logw)
	}
	// Its own process group: a Ctrl-C at the terminal reaches the lab only,
	// which stops the server itself (Stop).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := lab.StartChild(cmd); err != nil {
		logf.Close()
		return nil, fmt.Errorf("prometheus: start %s: %w", bin, err)
	}
	p := &Prometheus{URL: "http://" + addr, Dir: dir, cmd: cmd, done: make(chan error, 1), log: logf}
	go func() { p.done <- cmd.Wait() }()
	if err := p.waitReady(ctx, 60*time.Second); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// waitReady polls /-/ready until it answers 200, the server exits, ctx
// ends or limit passes.
func (p *Prometheus) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(p.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("prometheus exited before it was ready (%v): %s", err, p.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("prometheus at %s was not ready within %v: %s", p.URL, limit, p.logTail())
		}
	}
}

// logTail is the last line of the server's log.
func (p *Prometheus) logTail() string {
	b, _ := os.ReadFile(filepath.Join(p.Dir, "prometheus.log"))
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	if len(b) == 0 {
		return "(no output)"
	}
	return string(b)
}

// kill ends the server with SIGKILL (a no-op once it has exited) and
// waits for it.
func (p *Prometheus) kill() {
	p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
	p.log.Close()
}

// Stop kills the server and removes its directory. It is safe to call
// more than once, also from several goroutines.
func (p *Prometheus) Stop() error {
	if p == nil {
		return nil
	}
	p.once.Do(func() {
		p.kill()
		if err := os.RemoveAll(p.Dir); err != nil {
			p.err = fmt.Errorf("prometheus: remove %s: %w", p.Dir, err)
		}
	})
	return p.err
}

// SweepPrometheus removes the private Prometheus directories under
// os.TempDir whose owner process is gone (a lab killed before its Stop;
// the server itself died with it). It returns what it removed.
func SweepPrometheus() []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), promDirPrefix+"*"))
	var removed []string
	for _, d := range dirs {
		if gone, err := proclife.OwnerGone(filepath.Join(d, ownerFile)); err != nil || !gone {
			continue
		}
		if os.RemoveAll(d) == nil {
			removed = append(removed, d)
		}
	}
	return removed
}

// freePort returns a 127.0.0.1 port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitUp waits until Prometheus has scraped n targets of Job successfully.
func waitUp(ctx context.Context, base string, n int, limit time.Duration) error {
	want := strconv.Itoa(n)
	var got string
	var err error
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); lab.Sleep(ctx, 200*time.Millisecond) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		got, err = instantQuery(ctx, base, `count(up{job="`+Job+`"} == 1)`)
		if err == nil && got == want {
			return nil
		}
	}
	return fmt.Errorf("prometheus: %s of %d instances up after %v (%v)", got, n, limit, err)
}

// instantQuery returns the value of the first sample of query, "" for none.
func instantQuery(ctx context.Context, base, query string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?query="+url.QueryEscape(query), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", err
	}
	if body.Status != "success" {
		return "", fmt.Errorf("status %s", body.Status)
	}
	if len(body.Data.Result) == 0 {
		return "", nil
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	return s, nil
}

// instantVector evaluates query at t and returns each series' value by its
// instance label.
func instantVector(ctx context.Context, base, query string, t time.Time) (map[string]float64, error) {
	q := url.Values{"query": {query}, "time": {strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("prometheus: %s: %w", query, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s: %s", query, body.Error)
	}
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) { // the JSON keeps numbers only
			out[r.Metric["instance"]] = v
		}
	}
	return out, nil
}

// PromEvidence is what Prometheus holds of one instance over a whole
// phase, read with a window that spans it: the truth as the agent's
// counters and the scrapes saw it, apart from triage's per-step rules.
type PromEvidence struct {
	StallS        float64 `json:"stall_s"`
	ThrottledS    float64 `json:"throttled_s"`
	FailedScrapes int     `json:"failed_scrapes"`
}

// phaseEvidence reads PromEvidence for every instance of Job over
// [start, end] (the window reaches one scrape further back, so that the
// increase of a counter at the phase's start counts).
func phaseEvidence(ctx context.Context, base string, start, end time.Time) (map[string]PromEvidence, error) {
	w := "[" + strconv.FormatInt(end.Sub(start).Milliseconds()+1000, 10) + "ms]"
	sel := `{job="` + Job + `"}`
	out := map[string]PromEvidence{}
	for _, q := range []struct {
		query string
		set   func(*PromEvidence, float64)
	}{
		{"increase(latscope_stall_seconds_total" + sel + w + ")", func(e *PromEvidence, v float64) { e.StallS = v }},
		{"increase(latscope_cfs_throttled_seconds_total" + sel + w + ")", func(e *PromEvidence, v float64) { e.ThrottledS = v }},
		{"count_over_time(up" + sel + w + ") - sum_over_time(up" + sel + w + ")", func(e *PromEvidence, v float64) { e.FailedScrapes = int(v) }},
	} {
		m, err := instantVector(ctx, base, q.query, end)
		if err != nil {
			return nil, err
		}
		for inst, v := range m {
			e := out[inst]
			q.set(&e, v)
			out[inst] = e
		}
	}
	return out, nil
}
