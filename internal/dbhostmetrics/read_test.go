package dbhostmetrics_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbhostmetrics"
	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/internal/triage"
	"github.com/latscope/latscope/internal/triage/promtest"
)

// TestReadLive reads the pressure counter of a real node_exporter through
// a real Prometheus scraping it every second: the samples are the
// kernel's own PSI some total (/proc/pressure/cpu, read before and after),
// in order; with two exporters scraped and no instance named it asks for
// one, naming both; an instance Prometheus does not scrape is said so.
func TestReadLive(t *testing.T) {
	tier.Busy(t)
	before := kernelSome(t)
	a, b := promtest.NodeExporter(t), promtest.NodeExporter(t)
	url := promtest.StartScraping(t, a, b)
	cl, err := triage.NewClient(triage.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	from := time.Now()
	var p *dbwait.Pressure
	deadline := time.Now().Add(30 * time.Second)
	for {
		to := time.Now()
		got, err := dbhostmetrics.Read(ctx, cl, a, from.Add(-time.Minute), to)
		if err == nil && len(got.Samples) >= 3 {
			p = got
			break
		}
		if err != nil && !errors.Is(err, dbhostmetrics.ErrNoSeries) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 3 scrapes of %s within 30 s: %v", a, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	after := kernelSome(t)
	if !strings.Contains(p.Source, strconv.Quote(a)) || !strings.Contains(p.Source, url) {
		t.Errorf("source %q does not name the instance %s and the Prometheus", p.Source, a)
	}
	for i, s := range p.Samples {
		if s.Some < before-time.Millisecond || s.Some > after+time.Millisecond {
			t.Errorf("sample %d: %v, outside the kernel's PSI some total before (%v) and after (%v)", i, s.Some, before, after)
		}
		if i > 0 && (!s.At.After(p.Samples[i-1].At) || s.Some < p.Samples[i-1].Some) {
			t.Errorf("sample %d (%v at %v) not after sample %d (%v at %v)", i, s.Some, s.At, i-1, p.Samples[i-1].Some, p.Samples[i-1].At)
		}
	}
	t.Logf("%d samples of %s, %v to %v", len(p.Samples), p.Source, p.Samples[0].At.Format(time.RFC3339Nano), p.Samples[len(p.Samples)-1].At.Format(time.RFC3339Nano))

	_, err = dbhostmetrics.Read(ctx, cl, "", from.Add(-time.Minute), time.Now())
	if err == nil || !strings.Contains(err.Error(), "--dbhost-instance") || !strings.Contains(err.Error(), strconv.Quote(a)) || !strings.Contains(err.Error(), strconv.Quote(b)) {
		t.Errorf("two exporters, no instance: %v; want both named and --dbhost-instance asked for", err)
	}
	_, err = dbhostmetrics.Read(ctx, cl, "db1:9100", from.Add(-time.Minute), time.Now())
	if !errors.Is(err, dbhostmetrics.ErrNoSeries) || !strings.Contains(err.Error(), `"db1:9100"`) {
		t.Errorf("an instance not scraped: %v; want ErrNoSeries naming it", err)
	}
	if _, err := dbhostmetrics.Read(ctx, cl, a, from.Add(-48*time.Hour), time.Now()); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a 48 h window: %v; want it refused", err)
	}
}

// kernelSome is the kernel's PSI some total for the CPU.
func kernelSome(t *testing.T) time.Duration {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		t.Skipf("SKIP (loud): no PSI here: %v", err)
	}
	for _, f := range strings.Fields(strings.SplitN(string(b), "\n", 2)[0]) {
		if v, ok := strings.CutPrefix(f, "total="); ok {
			us, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return time.Duration(us) * time.Microsecond
		}
	}
	t.Fatalf("no total in /proc/pressure/cpu: %q", b)
	return 0
}
