package jfrtest

import (
	"math"
	"testing"
)

func TestStat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ alpha, z float64 }{{0.05, 1.6449}, {0.025, 1.9600}, {0.001, 3.0902}} {
		if z := Z(c.alpha); math.Abs(z-c.z) > 1e-3 {
			t.Errorf("Z(%g) = %.4f, want %.4f", c.alpha, z, c.z)
		}
	}
	if m, se := MeanSE([]float64{1, 2, 3, 4}); m != 2.5 || math.Abs(se-0.6455) > 1e-4 {
		t.Errorf("MeanSE = %g, %g; want 2.5, 0.6455", m, se)
	}
	// 30 of 200 against 6 of 200: p = 0.09, z = 0.12/√(0.09·0.91·0.01) = 4.19
	if z := ProportionsZ(30, 200, 6, 200); math.Abs(z-4.19) > 0.01 {
		t.Errorf("ProportionsZ = %.3f, want 4.19", z)
	}
	if p := ProportionsPower(0.15, 0.03, 200, 200, 0.01); p < 0.96 || p > 0.98 {
		t.Errorf("ProportionsPower = %.4f, want 0.97", p)
	}
	if p := ProportionsPower(0.03, 0.03, 200, 200, 0.01); math.Abs(p-0.01) > 0.002 {
		t.Errorf("ProportionsPower with no difference = %.4f, want α = 0.01", p)
	}
}
