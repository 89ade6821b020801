package demo

import (
	"fmt"
	"strings"
)

// Mode is the shape of a request: which segments overlap and what the shared
// section holds its lock for.
type Mode uint8

const (
	// ModeSerial runs cpu, upstream, db and shared one after another.
	ModeSerial Mode = iota
	// ModeConcurrent runs cpu, then upstream and db at the same time, then shared.
	ModeConcurrent
	// ModeFixed is ModeConcurrent with the shared section's work moved out
	// of the critical section: only the update stays under the lock.
	ModeFixed
	numModes
)

var modeNames = [...]string{
	ModeSerial:     "serial",
	ModeConcurrent: "concurrent",
	ModeFixed:      "fixed",
}

// Modes lists every mode in order.
func Modes() []Mode { return []Mode{ModeSerial, ModeConcurrent, ModeFixed} }

// String returns the mode's name: serial, concurrent or fixed.
func (m Mode) String() string {
	if m < numModes {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// MarshalText returns the mode's name.
func (m Mode) MarshalText() ([]byte, error) {
	if m >= numModes {
		return nil, fmt.Errorf("invalid mode %d", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText parses a mode name; the error lists the valid names.
func (m *Mode) UnmarshalText(text []byte) error {
	for i, name := range modeNames {
		if string(text) == name {
			*m = Mode(i)
			return nil
		}
	}
	return fmt.Errorf("unknown mode %q (valid: %s)", text, strings.Join(modeNames[:], ", "))
}

// Set parses a mode name, so that *Mode is a flag.Value.
func (m *Mode) Set(s string) error { return m.UnmarshalText([]byte(s)) }

// overlaps reports whether the upstream call and the query run at the same time.
func (m Mode) overlaps() bool { return m == ModeConcurrent || m == ModeFixed }

// fixedShared reports whether the shared section's work is done outside its lock.
func (m Mode) fixedShared() bool { return m == ModeFixed }
