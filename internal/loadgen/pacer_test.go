package loadgen

import (
	"math"
	"testing"
	"testing/quick"
	"time"
)

func TestConstantPacerDue(t *testing.T) {
	tests := []struct {
		rate float64
		n    uint64
		want time.Duration
	}{
		{200, 0, 0},
		{200, 1, 5 * time.Millisecond},
		{200, 200, time.Second},
		{0.5, 3, 6 * time.Second},
		{0, 1, never},
		{-1, 1, never},
		{math.NaN(), 1, never},
		{1e-300, 2, never},
	}
	for _, tt := range tests {
		if got := (ConstantPacer{Rate: tt.rate}).Due(tt.n, 0); got != tt.want {
			t.Errorf("ConstantPacer{%v}.Due(%d) = %v, want %v", tt.rate, tt.n, got, tt.want)
		}
	}
}

// TestConstantPacerProperties: dues never decrease, and the number of
// requests due before d is rate*d rounded up (within one for float rounding).
func TestConstantPacerProperties(t *testing.T) {
	f := func(rate16 uint16, n uint32, dms uint16) bool {
		rate := float64(rate16%5000) + 1
		p := ConstantPacer{Rate: rate}
		if p.Due(uint64(n), 0) > p.Due(uint64(n)+1, 0) {
			return false
		}
		d := time.Duration(dms%2000) * time.Millisecond
		count := 0
		for i := uint64(0); p.Due(i, 0) < d; i++ {
			count++
		}
		want := math.Ceil(rate * d.Seconds())
		return math.Abs(float64(count)-want) <= 1
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 300}); err != nil {
		t.Error(err)
	}
}

// TestClosedPacerProperties: the first request is due at once, every later
// one exactly Think after the client was ready, never before it.
func TestClosedPacerProperties(t *testing.T) {
	f := func(think, last uint32, n uint16) bool {
		p := ClosedPacer{Think: time.Duration(think)}
		l := time.Duration(last)
		if p.Due(0, l) != 0 {
			return false
		}
		due := p.Due(uint64(n)+1, l)
		return due == l+p.Think && due >= l
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
	if got := (ClosedPacer{Think: time.Second}).Due(1, never-1); got != never {
		t.Errorf("Due near overflow = %v, want never", got)
	}
}

func TestPacerFunc(t *testing.T) {
	p := PacerFunc(func(n uint64, last time.Duration) time.Duration { return last + time.Duration(n) })
	if got := p.Due(3, 4); got != 7 {
		t.Errorf("PacerFunc.Due(3, 4) = %v, want 7ns", got)
	}
}
