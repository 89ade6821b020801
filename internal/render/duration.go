package render

import (
	"encoding/json"
	"time"

	"github.com/latscope/latscope/internal/units"
)

// Duration is a time in the report model. It is kept to the nanosecond,
// and encoded in JSON as milliseconds rounded to the microsecond, the unit
// of every _ms field (docs/json.md).
type Duration time.Duration

// Ms is d in milliseconds, rounded to the microsecond: what every writer
// prints.
func (d Duration) Ms() float64 { return units.Ms(time.Duration(d)) }

// Std is d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// MarshalJSON writes d in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Ms()) }

// UnmarshalJSON reads milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*d = Duration(ms * 1e6)
	return nil
}

// durOf is the Duration of a time in nanoseconds held as a float (a mean).
func durOf(ns float64) Duration { return Duration(ns) }

// durPtr returns a pointer to d, for the fields that are null when unknown.
func durPtr(d Duration) *Duration { return &d }
