package fleet

import (
	"strings"
	"testing"
	"time"
)

// TestConfigCheck: the profiles pass; each bad field is refused naming
// its flag or what it wants.
func TestConfigCheck(t *testing.T) {
	for _, c := range []Config{DefaultConfig, ShortConfig} {
		if err := c.Check(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Minute = time.Second }, "minute 1s"},
		{func(c *Config) { c.Minute = 3500 * time.Millisecond }, "want whole seconds"},
		{func(c *Config) { c.Threshold = 0 }, "threshold 0s"},
		{func(c *Config) { c.RequestThreshold = -time.Second }, "request-threshold -1s"},
		{func(c *Config) { c.Hold = -time.Second }, "hold -1s"},
		{func(c *Config) { c.Period = 1 }, "period of at least 2 minutes"},
		{func(c *Config) { c.PhaseMinutes = 5 }, "phases of at least 6 minutes"},
		{func(c *Config) { c.Pool = 0 }, "one connection"},
	} {
		c := DefaultConfig
		tc.edit(&c)
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

// TestTotal: the planned time is the sum of the warm-up, the phases and
// the gaps between them, in minutes.
func TestTotal(t *testing.T) {
	c := ShortConfig // 1 + (1+5·4+1) + 3·7 + 3·1 = 47 minutes
	if got, want := c.Total(), 47*c.Minute; got != want {
		t.Errorf("Total = %v, want %v", got, want)
	}
}

// TestPromConfig: one job, every target, the scrape interval as the
// timeout.
func TestPromConfig(t *testing.T) {
	got := promConfig(PromOptions{Job: Job, Targets: []string{"127.0.0.1:1", "127.0.0.1:2"}, ScrapeInterval: time.Second})
	want := `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: "latscope-fleet"
    static_configs:
      - targets:
          - "127.0.0.1:1"
          - "127.0.0.1:2"
`
	if got != want {
		t.Errorf("config:\n%s\nwant:\n%s", got, want)
	}
}
