package burst

import "fmt"

// Mode is how a Service fans a batch out.
type Mode uint8

// Modes.
const (
	Spawn Mode = iota // one goroutine per event
	Pool              // a pool of Workers goroutines (default GOMAXPROCS) on an unbuffered channel
	Fixed             // a small steady pool (default 2 workers) on a channel that holds a whole batch
)

var modeNames = [...]string{Spawn: "spawn", Pool: "pool", Fixed: "fixed"}

// String returns the mode's name.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", m)
}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for m, n := range modeNames {
		if n == s {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("unknown mode %q (modes: spawn, pool, fixed)", s)
}

// Set parses a mode name (flag.Value).
func (m *Mode) Set(s string) error {
	v, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// MarshalText encodes the mode by name.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText decodes a mode name.
func (m *Mode) UnmarshalText(b []byte) error { return m.Set(string(b)) }
