package units

import (
	"math"
	"testing"
	"time"
)

func TestMs(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want float64
	}{
		{0, 0},
		{1500 * time.Microsecond, 1.5},
		{1234567, 1.235},
		{-1234567, -1.235},
		{time.Hour, 3.6e6},
	} {
		if got := Ms(tt.d); got != tt.want {
			t.Errorf("Ms(%v) = %v, want %v", tt.d, got, tt.want)
		}
	}
	if Round3(math.NaN()) != 0 || Round3(math.Inf(1)) != 0 {
		t.Error("NaN or Inf not turned into 0")
	}
}
