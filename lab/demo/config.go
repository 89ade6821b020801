package demo

import (
	"context"
	"time"
)

// Config configures the demo service. Zero fields take DefaultConfig's value,
// except UpstreamURL and DBURL, which are required, and SQLPrefix.
type Config struct {
	// Mode is the shape of a request.
	Mode Mode
	// UpstreamURL is fetched once per request by the upstream segment.
	UpstreamURL string
	// DBURL is a PostgreSQL connection string (URL or key=value DSN).
	DBURL string
	// PoolSize is the number of database connections, all opened at start.
	PoolSize int
	// UpstreamConns bounds the idle keep-alive connections to the upstream;
	// keep it at least the number of concurrent clients, or requests dial.
	UpstreamConns int
	// CPUWork is the CPU time the cpu segment spends on SHA-256.
	CPUWork time.Duration
	// SharedWork is the CPU time the shared section spends on SHA-256.
	SharedWork time.Duration
	// DBSleep is the argument of the db segment's pg_sleep.
	DBSleep time.Duration
	// CPUIters is the number of SHA-256 iterations that take one millisecond
	// of CPU. 0 means calibrate at start-up (about a quarter of a second).
	CPUIters int
	// SQLPrefix, when set, is called once per query; its result is put in
	// front of the SQL text (for example a /*traceparent=…*/ comment).
	SQLPrefix func(ctx context.Context) string
}

// DefaultConfig is the seed experiment's service in serial mode, minus the two URLs.
var DefaultConfig = Config{
	Mode:          ModeSerial,
	PoolSize:      10,
	UpstreamConns: 100,
	CPUWork:       1 * time.Millisecond,
	SharedWork:    2 * time.Millisecond,
	DBSleep:       50 * time.Millisecond,
}

// withDefaults returns c with every zero field (but the URLs, CPUIters and
// SQLPrefix) set from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig
	if c.PoolSize <= 0 {
		c.PoolSize = d.PoolSize
	}
	if c.UpstreamConns <= 0 {
		c.UpstreamConns = d.UpstreamConns
	}
	if c.CPUWork <= 0 {
		c.CPUWork = d.CPUWork
	}
	if c.SharedWork <= 0 {
		c.SharedWork = d.SharedWork
	}
	if c.DBSleep <= 0 {
		c.DBSleep = d.DBSleep
	}
	return c
}
