// Package promtest serves known series from a real Prometheus for tests:
// [Fleet] writes the agent's metrics for a few instances as OpenMetrics
// text with the faults it is told, and [Start] backfills such text into a
// private data directory (promtool tsdb create-blocks-from openmetrics) and
// starts /usr/bin/prometheus on it, on 127.0.0.1, for the test's life;
// [StartScraping] starts one that scrapes live targets, such as the real
// node_exporter [NodeExporter] starts.
package promtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
)

// Buckets are the agent's histogram buckets (seconds).
var Buckets = []float64{.001, .0025, .005, .01, .02, .03, .04, .05, .06, .075, .1, .15, .2, .3, .5, .75, 1, 2.5, 5, 10}

// Fleet describes the metrics of one job's instances over a time range.
// Every Scrape, each instance makes DB calls and requests whose latencies
// fall in fixed buckets: fast ones in a good minute, a fifth to a third of
// them around 90 ms in a bad minute.
type Fleet struct {
	Job, Route string
	Instances  []string
	Start      time.Time
	Duration   time.Duration
	Scrape     time.Duration
	// Bad says whether instance i is slow in the minute starting at m.
	Bad func(i int, m time.Time) bool
	// NoDBSlows makes requests without DB calls slow in bad minutes too.
	NoDBSlows bool
	// Throttled, Stall and PSI are the seconds per minute the throttled
	// time, the stall probe and the cgroup's PSI gain in a bad minute.
	Throttled, Stall, PSI float64
	// Stalls is the number of the stall probe's late wake-ups per minute
	// in a bad minute that Stall is spread over (0: one); outside them it
	// wakes one millisecond late once a minute.
	Stalls float64
	// Held says whether instance i is stopped between requests in the
	// minute starting at m: its latencies stay fast while its stall probe
	// gains HeldStall seconds in one late wake-up.
	Held      func(i int, m time.Time) bool
	HeldStall float64
	// NoSteal leaves the steal counter out.
	NoSteal bool
	// Gap says whether instance i goes unscraped in the minute starting
	// at m (a stopped process): no sample is written for it, while its
	// counters go on as Bad says.
	Gap func(i int, m time.Time) bool
	// Rate multiplies the calls and requests of every interval (0: 1).
	Rate float64
}

// minuteOf returns the minute the interval ending at t falls in.
func (f Fleet) minuteOf(t time.Time) time.Time { return t.Add(-f.Scrape).Truncate(time.Minute) }

// scraped says whether sample k of instance i is written.
func (f Fleet) scraped(i, k int) bool {
	return k == 0 || f.Gap == nil || !f.Gap(i, f.minuteOf(f.Start.Add(time.Duration(k)*f.Scrape)))
}

// counts are one interval's observations per bucket index.
type counts map[int]float64

// interval returns the DB-call and no-DB request observations of one
// scrape interval (30 s scale: 60 DB calls, 30 no-DB requests).
func (f Fleet) interval(bad bool) (db, noDB counts) {
	scale := f.Scrape.Seconds() / 30
	if f.Rate > 0 {
		scale *= f.Rate
	}
	db, noDB = counts{2: 50 * scale, 3: 10 * scale}, counts{1: 28 * scale, 2: 2 * scale}
	if bad {
		db = counts{2: 40 * scale, 10: 20 * scale} // p95 in (.075, .1]
		if f.NoDBSlows {
			noDB = counts{1: 20 * scale, 10: 10 * scale}
		}
	}
	return db, noDB
}

// series is one instance's cumulative state.
type series struct {
	db, dbYes, noDB          []float64 // cumulative bucket counts (non-cumulative per bucket)
	dbSum, yesSum, noSum     float64
	throttled, stall, steal  float64
	stalls                   float64
	psiCgroup, psiHost, cfsN float64
}

// WriteTo writes the fleet's samples as OpenMetrics text, without the
// final "# EOF" (Write adds it after all fleets).
func (f Fleet) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	n := int(f.Duration / f.Scrape)
	snaps := make([][]series, len(f.Instances)) // per instance, per sample
	for i := range f.Instances {
		st := series{db: make([]float64, len(Buckets)), dbYes: make([]float64, len(Buckets)), noDB: make([]float64, len(Buckets))}
		for k := 0; k <= n; k++ {
			if k > 0 {
				t := f.Start.Add(time.Duration(k) * f.Scrape)
				f.advance(&st, i, t)
			}
			cp := st
			cp.db, cp.dbYes, cp.noDB = append([]float64(nil), st.db...), append([]float64(nil), st.dbYes...), append([]float64(nil), st.noDB...)
			snaps[i] = append(snaps[i], cp)
		}
	}
	ts := func(k int) string {
		return strconv.FormatInt(f.Start.Add(time.Duration(k)*f.Scrape).Unix(), 10)
	}
	labels := func(i int, extra string) string {
		return fmt.Sprintf(`job=%q,instance=%q%s`, f.Job, f.Instances[i], extra)
	}
	route := fmt.Sprintf(`,route=%q`, f.Route)
	hist := func(name, extra string, typeLine bool, pick func(s *series) ([]float64, float64)) {
		if typeLine {
			fmt.Fprintf(bw, "# TYPE %s histogram\n", name)
		}
		for i := range f.Instances {
			for k, s := range snaps[i] {
				if !f.scraped(i, k) {
					continue
				}
				b, sum := pick(&s)
				var cum float64
				for j, le := range Buckets {
					cum += b[j]
					fmt.Fprintf(bw, "%s_bucket{%s,le=\"%s\"} %g %s\n", name, labels(i, route+extra), strconv.FormatFloat(le, 'g', -1, 64), cum, ts(k))
				}
				fmt.Fprintf(bw, "%s_bucket{%s,le=\"+Inf\"} %g %s\n", name, labels(i, route+extra), cum, ts(k))
				fmt.Fprintf(bw, "%s_count{%s} %g %s\n", name, labels(i, route+extra), cum, ts(k))
				fmt.Fprintf(bw, "%s_sum{%s} %g %s\n", name, labels(i, route+extra), sum, ts(k))
			}
		}
	}
	// The request histogram's two label sets form one family.
	hist("latscope_request_duration_seconds", `,db="yes"`, true, func(s *series) ([]float64, float64) { return s.dbYes, s.yesSum })
	hist("latscope_request_duration_seconds", `,db="no"`, false, func(s *series) ([]float64, float64) { return s.noDB, s.noSum })
	hist("latscope_db_call_duration_seconds", "", true, func(s *series) ([]float64, float64) { return s.db, s.dbSum })
	counter := func(name, extra string, pick func(s *series) float64) {
		fmt.Fprintf(bw, "# TYPE %s counter\n", name)
		for i := range f.Instances {
			for k, s := range snaps[i] {
				if !f.scraped(i, k) {
					continue
				}
				fmt.Fprintf(bw, "%s_total{%s} %g %s\n", name, labels(i, extra), pick(&s), ts(k))
			}
		}
	}
	counter("latscope_cfs_periods", "", func(s *series) float64 { return s.cfsN })
	counter("latscope_cfs_throttled_seconds", "", func(s *series) float64 { return s.throttled })
	counter("latscope_stall_seconds", "", func(s *series) float64 { return s.stall })
	counter("latscope_stalls", "", func(s *series) float64 { return s.stalls })
	if !f.NoSteal {
		counter("latscope_steal_seconds", "", func(s *series) float64 { return s.steal })
	}
	fmt.Fprintf(bw, "# TYPE latscope_cpu_pressure_some_seconds counter\n")
	for _, scope := range []string{"cgroup", "host"} {
		for i := range f.Instances {
			for k, s := range snaps[i] {
				if !f.scraped(i, k) {
					continue
				}
				v := s.psiCgroup
				if scope == "host" {
					v = s.psiHost
				}
				fmt.Fprintf(bw, "latscope_cpu_pressure_some_seconds_total{%s} %g %s\n", labels(i, `,scope="`+scope+`"`), v, ts(k))
			}
		}
	}
	return 0, bw.Flush()
}

// advance adds the interval ending at t to st.
func (f Fleet) advance(st *series, i int, t time.Time) {
	m := f.minuteOf(t)
	bad := f.Bad != nil && f.Bad(i, m)
	db, noDB := f.interval(bad)
	for j, c := range db {
		st.db[j] += c
		st.dbYes[j] += c // a request with one DB call lasts as long as it
		st.dbSum += c * Buckets[j]
		st.yesSum += c * Buckets[j]
	}
	for j, c := range noDB {
		st.noDB[j] += c
		st.noSum += c * Buckets[j]
	}
	per := f.Scrape.Seconds() / 60
	st.cfsN += 10 * f.Scrape.Seconds()
	st.psiHost += 0.01 * per
	st.stall += 0.001 * per
	st.stalls += per
	if bad {
		st.throttled += f.Throttled * per
		st.stall += f.Stall * per
		st.stalls += max(f.Stalls, 1) * per
		st.psiCgroup += f.PSI * per
	}
	if f.Held != nil && f.Held(i, m) {
		st.stall += f.HeldStall * per
		st.stalls += per
	}
}

// Write writes the fleets as one OpenMetrics file.
func Write(w io.Writer, fleets ...Fleet) error {
	for _, f := range fleets {
		if _, err := f.WriteTo(w); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "# EOF\n")
	return err
}

// Binaries returns the paths of prometheus and promtool, or the reason a
// test must skip.
func Binaries() (prometheus, promtool, skip string) {
	for _, name := range []string{"prometheus", "promtool"} {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", "", "SKIP: " + name + " is not installed (Debian package prometheus); the triage tests against a real Prometheus did not run"
		}
		if name == "prometheus" {
			prometheus = p
		} else {
			promtool = p
		}
	}
	return prometheus, promtool, ""
}

// Start backfills the OpenMetrics text om into a private data directory,
// starts Prometheus on it on a free 127.0.0.1 port and returns its base
// URL. The process is killed and the directory removed when t ends. A
// missing prometheus or promtool skips t, loudly.
func Start(t testing.TB, om []byte) string {
	t.Helper()
	tier.Require(t, "a Prometheus server")
	prom, tool, skip := Binaries()
	if skip != "" {
		t.Skip(skip)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	input := filepath.Join(dir, "series.om")
	if err := os.WriteFile(input, om, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, "tsdb", "create-blocks-from", "openmetrics", input, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool backfill: %v\n%s", err, tail(out))
	}
	os.Remove(input)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\nscrape_configs: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var logs bytes.Buffer
	cmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+data,
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	url := "http://" + addr
	waitReady(t, cmd, &logs, url+"/-/ready", "prometheus")
	return url
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment ago.
func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// tail returns the last 2 KiB of b.
func tail(b []byte) []byte {
	if len(b) > 2048 {
		return b[len(b)-2048:]
	}
	return b
}
