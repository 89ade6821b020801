package fleet

import (
	"slices"
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
		{func(c *Config) { c.Phases = []string{"gc", "nope"} }, `unknown phase "nope"`},
		{func(c *Config) { c.Phases = []string{"gc", "gc"} }, `phase "gc" twice`},
		{func(c *Config) { c.Phases = []string{} }, "at least one phase"},
		{func(c *Config) { c.SlowUpstream = c.UpstreamDelay }, "upstream slowed above its usual delay"},
		{func(c *Config) { c.Phases, c.AllocGoroutines = []string{PhaseGC}, 0 }, "one allocating goroutine"},
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
	// 3 + (1+5·5+1) + 8 (lock) + 8 (stop) + 8 (none) + 1+8 (upstream) +
	// 16 (continuous) + 16 (gc) + 1+8 (thin) + 7·2 = 118 minutes
	c = DefaultConfig
	if got, want := c.Total(), 118*c.Minute; got != want {
		t.Errorf("default Total = %v, want %v", got, want)
	}
}

// TestProfiles: the default profile runs every phase, --short the four of
// CI, and the phases of a profile run in the order of AllPhases.
func TestProfiles(t *testing.T) {
	if !slices.Equal(DefaultConfig.phases(), AllPhases) || !slices.Equal(ShortConfig.phases(), ShortPhases) {
		t.Errorf("phases: default %v, short %v", DefaultConfig.phases(), ShortConfig.phases())
	}
	if !DefaultConfig.needsUpstream() || ShortConfig.needsUpstream() {
		t.Errorf("upstream needed: default %v, short %v; want true, false", DefaultConfig.needsUpstream(), ShortConfig.needsUpstream())
	}
	r := &runner{cfg: DefaultConfig, fleet: []*member{{addr: "a"}, {addr: "b"}, {addr: "c"}}}
	var got []string
	for _, s := range r.specs() {
		got = append(got, s.name)
		if s.minutes != DefaultConfig.phaseMinutes(s.name) {
			t.Errorf("phase %s: %d minutes, want %d", s.name, s.minutes, DefaultConfig.phaseMinutes(s.name))
		}
		if tr := s.truth(); tr.Scope == "" || (tr.Continuous && tr.Period > 0) {
			t.Errorf("phase %s: truth %+v", s.name, tr)
		}
	}
	if !slices.Equal(got, AllPhases) {
		t.Errorf("specs %v, want %v", got, AllPhases)
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
